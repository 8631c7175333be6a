package plan

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolhost/toolhost/dispatcher"
)

// outcome is how one revision's execution ended: reason "" means "replan
// because of err"; any other reason ends the session.
type outcome struct {
	reason  Reason
	err     *Error
	message string
}

// rank orders outcomes when several happen in one revision: the caller
// going away beats a fatal error, which beats an abort, which beats a
// refused step, which beats a replannable failure.
func (o *outcome) rank() int {
	switch o.reason {
	case ReasonCancelled:
		return 5
	case ReasonFatal:
		return 4
	case ReasonAborted:
		return 3
	case ReasonStepBudget:
		return 2
	}
	return 1
}

func worse(cur, next *outcome) *outcome {
	if next == nil || (cur != nil && cur.rank() >= next.rank()) {
		return cur
	}
	return next
}

type completion struct {
	id     int
	result json.RawMessage
	err    error
}

// execute runs the current revision. Ready steps (every dependency
// settled) are dispatched in id order, at most MaxParallel in flight; each
// completion may make more ready. After the first failure (but one under
// on_failure skip), refusal or cancellation nothing more is dispatched,
// the steps in flight are awaited and logged, and the worst outcome is
// returned.
func (r *run) execute(ctx context.Context) outcome {
	waiting := r.f.pending()
	inflight := map[int]string{} // step id → identity
	done := make(chan completion, len(waiting))
	var stop *outcome
	for {
		if stop == nil && ctx.Err() != nil {
			stop = &outcome{reason: ReasonCancelled, message: fmt.Sprintf("the session was cancelled: %v", context.Cause(ctx))}
		}
		if stop == nil {
			waiting, stop = r.dispatch(ctx, waiting, inflight, done)
		}
		if len(inflight) == 0 {
			break
		}
		c := <-done
		r.drainRetries()
		delete(inflight, c.id)
		stop = worse(stop, r.finish(ctx, c))
	}
	if stop != nil {
		return *stop
	}
	if len(waiting) > 0 {
		// Cannot happen: the first waiting step depends only on settled
		// ones. Fail loudly rather than report the goal met.
		err := &Error{Kind: ErrorKind(dispatcher.KindInternal), StepID: waiting[0].ID,
			Message: "executor bug: the step never became ready"}
		return outcome{reason: ReasonFatal, err: err, message: err.Message}
	}
	msg := fmt.Sprintf("every step of revision %d is done (%d in the plan)", len(r.f.res.Revisions), len(r.stepOf))
	if failed, skipped := r.skips(); failed+skipped > 0 {
		msg += fmt.Sprintf("; under on_failure skip, %d failed and %d more were skipped", failed, skipped)
	}
	return outcome{reason: ReasonGoalMet, message: msg}
}

// skips counts the current revision's steps that failed under on_failure
// skip, and those skipped because of them.
func (r *run) skips() (failed, skipped int) {
	for id := range r.stepOf {
		if h, ok := r.f.step(id); ok && h.Error != nil && h.Revision == len(r.f.res.Revisions) {
			if h.Error.Kind == KindSkipped {
				skipped++
			} else {
				failed++
			}
		}
	}
	return failed, skipped
}

// policy is step id's way forward after a failure: its own, else the
// session's, else replan.
func (r *run) policy(id int) OnFailure {
	return cmp.Or(r.stepOf[id].OnFailure, r.onFailure, OnFailureReplan)
}

// afterFailure logs step s's failure perr (not fatal, the session not
// cancelled) and returns what it forces: nothing under skip (the rest
// runs), the end of the session under abort, a replan otherwise.
func (r *run) afterFailure(s Step, perr *Error) *outcome {
	e := Event{Kind: EventStepFailed, StepID: s.ID, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Error: perr}
	switch p := r.policy(s.ID); p {
	case OnFailureSkip:
		e.OnFailure = p
		r.emit(e)
		return nil
	case OnFailureAbort:
		e.OnFailure = p
		r.emit(e)
		return &outcome{reason: ReasonAborted, err: perr,
			message: fmt.Sprintf("step %d (%s) failed and its on_failure is abort: %s", s.ID, s.ToolName, perr.Message)}
	}
	r.emit(e)
	return &outcome{err: perr}
}

// failedDependency returns a dependency of s that failed (or was
// skipped) in this revision, if there is one: then s cannot run. Only a
// failure under on_failure skip lets the executor reach such a step.
func (r *run) failedDependency(s Step) (int, *Error) {
	for _, d := range r.deps[s.ID] {
		if h, ok := r.f.step(d); ok && h.Error != nil {
			return d, h.Error
		}
	}
	return 0, nil
}

// skip logs that s does not run because dependency dep failed with derr.
func (r *run) skip(s Step, dep int, derr *Error) {
	why := fmt.Sprintf("step %d depends on step %d, which failed (%s) under on_failure skip", s.ID, dep, derr.Kind)
	if derr.Kind == KindSkipped {
		why = fmt.Sprintf("step %d depends on step %d, which was skipped", s.ID, dep)
	}
	r.emit(Event{Kind: EventStepSkipped, StepID: s.ID, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome,
		Error: &Error{Kind: KindSkipped, Message: why, StepID: s.ID}})
}

// dispatch starts (or reuses, or refuses) the ready steps of waiting, in
// order, and returns the steps still waiting.
func (r *run) dispatch(ctx context.Context, waiting []Step, inflight map[int]string, done chan<- completion) ([]Step, *outcome) {
	var rest []Step
	for i, s := range waiting {
		if len(inflight) >= r.lim.MaxParallel {
			return append(rest, waiting[i:]...), nil
		}
		if dep, derr := r.failedDependency(s); derr != nil {
			r.skip(s, dep, derr)
			continue
		}
		if !r.ready(s) {
			rest = append(rest, s)
			continue
		}
		args, perr := r.resolve(s)
		if perr != nil {
			if out := r.afterFailure(s, perr); out != nil {
				return append(rest, waiting[i+1:]...), out
			}
			continue
		}
		ident, _ := identity(s.ToolName, args)
		if r.cfg.Reusable(s.ToolName) {
			if from, ok := r.f.succeeded[ident]; ok {
				prev, _ := r.f.step(from)
				if perr := r.overSession(s.ID, "reused arguments and result", len(args)+len(prev.Result)); perr != nil {
					r.emit(Event{Kind: EventStepFailed, StepID: s.ID, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Error: perr, Fatal: true})
					return append(rest, waiting[i+1:]...), &outcome{reason: ReasonFatal, err: perr, message: perr.Message}
				}
				r.emit(Event{Kind: EventStepReused, StepID: s.ID, ToolName: s.ToolName, Args: args,
					ExpectedOutcome: s.ExpectedOutcome, Result: prev.Result, ReusedFrom: from})
				continue
			}
			if inFlight(inflight, ident) {
				// An identical step is running: wait for its result
				// rather than run the tool twice.
				rest = append(rest, s)
				continue
			}
		}
		if r.f.res.StepsExecuted >= r.lim.MaxSteps {
			r.emit(Event{Kind: EventStepRefused, StepID: s.ID, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome})
			return append(rest, waiting[i+1:]...), &outcome{reason: ReasonStepBudget,
				message: fmt.Sprintf("step %d (%s) was refused: all %d steps of the budget have run", s.ID, s.ToolName, r.lim.MaxSteps)}
		}
		if perr := r.overSession(s.ID, "arguments", len(args)); perr != nil {
			r.emit(Event{Kind: EventStepFailed, StepID: s.ID, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Error: perr, Fatal: true})
			return append(rest, waiting[i+1:]...), &outcome{reason: ReasonFatal, err: perr, message: perr.Message}
		}
		key := Key(r.id, s.ID, s.ToolName, args)
		r.emit(Event{Kind: EventStepStarted, StepID: s.ID, ToolName: s.ToolName, Args: args,
			ExpectedOutcome: s.ExpectedOutcome, Key: key})
		inflight[s.ID] = ident
		r.keys[key] = s.ID
		call := dispatcher.Call{Tool: s.ToolName, Args: args, Options: r.cfg.Options}
		call.IdempotencyKey = key
		call.OnRetry = r.retries.push
		go func(id int) {
			res, err := r.cfg.Dispatcher.Call(withStep(ctx, id), call)
			done <- completion{id: id, result: res, err: err}
		}(s.ID)
	}
	return rest, nil
}

func inFlight(inflight map[int]string, ident string) bool {
	for _, id := range inflight {
		if id == ident {
			return true
		}
	}
	return false
}

// ready reports whether every dependency of s has succeeded (or was
// reused).
func (r *run) ready(s Step) bool {
	for _, d := range r.deps[s.ID] {
		h, ok := r.f.step(d)
		if !ok || h.Error != nil {
			return false
		}
	}
	return true
}

// finish logs a completion and returns the outcome it forces, if any.
func (r *run) finish(ctx context.Context, c completion) *outcome {
	s := r.stepOf[c.id]
	for k, id := range r.keys {
		if id == c.id {
			delete(r.keys, k)
		}
	}
	var perr *Error
	if c.err == nil {
		perr = r.tooLargeResult(c.id, len(c.result))
	}
	if c.err == nil && perr == nil {
		res, err := compact(orNull(c.result))
		if err == nil {
			if perr = r.overSession(c.id, "result", len(res)); perr == nil {
				r.emit(Event{Kind: EventStepSucceeded, StepID: c.id, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Result: res})
				return nil
			}
		} else {
			c.err = fmt.Errorf("the tool's result is not JSON: %v", err)
		}
	}
	if perr == nil {
		perr = stepError(c.id, c.err)
	}
	fatal := perr.Kind.Fatal() && ctx.Err() == nil
	switch {
	case ctx.Err() != nil:
		r.emit(Event{Kind: EventStepFailed, StepID: c.id, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Error: perr})
		return &outcome{reason: ReasonCancelled, err: perr, message: fmt.Sprintf("the session was cancelled: %v", context.Cause(ctx))}
	case fatal:
		r.emit(Event{Kind: EventStepFailed, StepID: c.id, ToolName: s.ToolName, ExpectedOutcome: s.ExpectedOutcome, Error: perr, Fatal: true})
		return &outcome{reason: ReasonFatal, err: perr, message: fmt.Sprintf("step %d (%s) failed fatally: %s", c.id, s.ToolName, perr.Message)}
	}
	return r.afterFailure(s, perr)
}

func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// stepError turns a dispatch failure into the step's error.
func stepError(id int, err error) *Error {
	var de *dispatcher.DispatchError
	if errors.As(err, &de) {
		return &Error{Kind: ErrorKind(de.Kind), Message: de.Message, Attempts: de.Attempts, StepID: id}
	}
	return &Error{Kind: ErrorKind(dispatcher.KindInternal), Message: err.Error(), StepID: id}
}

// dependencies are the steps s refers to plus its depends_on. Args were
// validated, so they decode and their references parse.
func dependencies(s Step) []int {
	deps := append([]int(nil), s.DependsOn...)
	if v, err := decodeJSON(s.Args); err == nil {
		_, _ = walk(v, nil, func(_ []string, rf ref) (any, error) {
			deps = append(deps, rf.step)
			return nil, nil
		})
	}
	return deps
}

// resolve replaces the references in s's arguments with the values they
// name and returns the canonical result. A pointer that does not resolve
// in the result is invalid_plan.
func (r *run) resolve(s Step) (json.RawMessage, *Error) {
	v, err := decodeJSON(s.Args)
	if err != nil {
		return nil, invalidf(s.ID, "args: %v", err)
	}
	docs := map[int]any{} // each result decoded once, however often it is named
	v, err = walk(v, nil, func(path []string, rf ref) (any, error) {
		doc, ok := docs[rf.step]
		if !ok {
			h, _ := r.f.step(rf.step)
			if doc, err = decodeJSON(h.Result); err != nil {
				return nil, fmt.Errorf("args%s: $ref %s: step %d's result is not JSON", pointer(path), rf.text, rf.step)
			}
			docs[rf.step] = doc
		}
		val, err := rf.lookup(doc)
		if err != nil {
			return nil, fmt.Errorf("args%s: %w", pointer(path), err)
		}
		return val, nil
	})
	if err != nil {
		return nil, invalidf(s.ID, "%v", err)
	}
	// References share the values they name, so the arguments may stand
	// for far more bytes than the plan and the results hold: count before
	// building them.
	if limit := r.cfg.Bounds.MaxArgsBytes; limit > 0 {
		if n := encodedSize(v, limit); n > limit {
			return nil, &Error{Kind: ErrorKind(dispatcher.KindSchema), StepID: s.ID, Message: fmt.Sprintf(
				"step %d's arguments after $ref substitution would be more than %d bytes, this server's limit for a call's arguments", s.ID, limit)}
		}
	}
	return encodeJSON(v), nil
}

// drainRetries logs the retries the dispatcher reported for steps in
// flight. The dispatcher reports a retry before the attempt that follows
// it, so by the time a step's completion arrives all its retries are
// queued.
func (r *run) drainRetries() {
	for _, re := range r.retries.take() {
		id, ok := r.keys[re.Key]
		if !ok {
			continue
		}
		r.emit(Event{Kind: EventStepRetry, StepID: id, ToolName: re.Tool, Attempt: re.Attempt, DelayMS: re.DelayMS,
			Error: &Error{Kind: ErrorKind(re.Reason), Message: re.Message, Attempts: re.Attempt, StepID: id}})
	}
}

// retryQueue collects retries reported from the steps' dispatching
// goroutines for the session's goroutine to log. It never blocks a
// dispatcher and never drops a retry.
type retryQueue struct {
	mu sync.Mutex
	q  []dispatcher.RetryEvent
}

func (q *retryQueue) push(e dispatcher.RetryEvent) {
	q.mu.Lock()
	q.q = append(q.q, e)
	q.mu.Unlock()
}

func (q *retryQueue) take() []dispatcher.RetryEvent {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.q
	q.q = nil
	return out
}
