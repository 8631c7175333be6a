package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/idempotency"
)

// A task whose tool asks for input (docs/PROTOCOL.md, "Tasks that ask").
// The run does not wait: it ends, and the task enters input_required in
// the store with the call and the questions (a parkedCall), for as long
// as a requestState would stay valid ([input] state_ttl). The answers
// come, on any replica,
//
//   - at 2026-07-28, in tasks/update's inputResponses, after tasks/get
//     showed the task's inputRequests (the Tasks extension);
//   - at 2025-11-25, from tasks/result: the server asks the client with
//     elicitation/create on that request, naming the task in _meta, as
//     the experimental Tasks of that revision say.
//
// Once every question of the round is answered, the replica that took
// the last answer moves the task back to working (compare and swap in the
// store: of two racing answers one wins) and runs the call again with the
// answers and the tool's state, as a resumed tools/call would. The state
// never leaves the server. An input request is the call's answer, not a
// failure: the dispatcher neither retries it nor counts it against the
// breaker, and frees the idempotency key for the resumed run, whose final
// result is the one kept (and the task's alias replays it).

// parkedCall is a task's Input while it waits: what the resumed run
// needs (the call as the client made it), the questions as asked, and
// the answers so far. Wire keys are the tool's request id and the round
// ("confirm@1"): the Tasks extension wants each key unique over the
// task's life, and a tool may reuse its ids when it asks again.
type parkedCall struct {
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args,omitempty"`
	Meta  map[string]any  `json:"meta,omitempty"`
	Round int             `json:"round"`
	// Caps is the elicitation capability of the client that started the
	// task: later rounds are asked in the modes it declared, whichever
	// request brings the answers.
	Caps    *mcp.ElicitationCapabilities `json:"caps,omitempty"`
	State   string                       `json:"state,omitempty"`
	Asks    mcp.InputRequestMap          `json:"asks"`
	IDs     map[string]string            `json:"ids"` // wire key → the tool's id
	Answers map[string]abi.InputAnswer   `json:"answers,omitempty"`
}

// taskAsk is where a task's run leaves the input request its tool made
// (inputResult), for runTask to park the task with.
type taskAsk struct {
	ir *abi.InputRequest
	c  *callInfo
}

type taskAskKey struct{}

// taskResume is how a run continues a parked call.
type taskResume struct {
	doc  []byte // the abi.InputResume the tool reads
	prev *parkedCall
}

// parkTask moves task id to input_required with the request its run's
// tool made, or says why it cannot (the run then ends the task with it).
func (s *Server) parkTask(call *mcp.CallToolRequest, id string, ask *taskAsk, prev *parkedCall) *dispatcher.DispatchError {
	inputs, ok := s.d.Tasks().(idempotency.TaskInputs)
	if !ok {
		return unanswerable(ask.c.tool, ask.ir, errors.New("the task store cannot keep a task's input requests"))
	}
	pc := parkedCall{Name: call.Params.Name, Args: call.Params.Arguments, Meta: call.Params.Meta, Round: 1,
		Caps: elicitCaps(call), State: ask.ir.State, Asks: mcp.InputRequestMap{}, IDs: map[string]string{}}
	if prev != nil {
		pc.Round, pc.Caps = prev.Round+1, prev.Caps
	}
	if pc.Round > maxElicitRounds {
		return refusal(dispatcher.KindSchema, "tool %s asked for input %d times in one call; this server relays at most %d rounds", ask.c.tool, pc.Round, maxElicitRounds)
	}
	if err := canElicitWith(pc.Caps, ask.ir); err != nil {
		return unanswerable(ask.c.tool, ask.ir, err)
	}
	for gid, q := range ask.ir.Requests {
		key := gid + "@" + strconv.Itoa(pc.Round)
		pc.Asks[key], pc.IDs[key] = elicitParams(q), gid
	}
	b, err := json.Marshal(pc)
	if err != nil {
		return refusal(dispatcher.KindInternal, "encoding the task's input request: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := inputs.AwaitTaskInput(ctx, id, b, s.sealer.ttl); err != nil {
		return refusal(dispatcher.KindTransient, "the task store did not keep the task's input request: %v", err)
	}
	s.logger.Debug("task asks for input", "task_id", id, "tool", ask.c.tool, "round", pc.Round)
	return nil
}

func parked(t idempotency.Task) (*parkedCall, error) {
	var pc parkedCall
	if err := json.Unmarshal(t.Input, &pc); err != nil {
		return nil, fmt.Errorf("task %q: its stored input request is not valid: %v", t.ID, err)
	}
	return &pc, nil
}

// outstanding are the questions of pc not answered yet.
func (pc *parkedCall) outstanding() mcp.InputRequestMap {
	out := mcp.InputRequestMap{}
	for k, q := range pc.Asks {
		if _, done := pc.Answers[k]; !done {
			out[k] = q
		}
	}
	return out
}

// inputRequestsOf is what tasks/get shows of a task in input_required:
// every question still outstanding, the same at each poll.
func inputRequestsOf(t idempotency.Task) mcp.InputRequestMap {
	if t.Status != idempotency.TaskInputRequired {
		return nil
	}
	pc, err := parked(t)
	if err != nil {
		return nil
	}
	return pc.outstanding()
}

// answerTask takes answers to task t's outstanding questions (others are
// ignored, as the extension says), keeps a partial set in the store, and
// resumes the task when the round is answered. An answer that is not a
// valid elicitation result is refused with -32602, and nothing of the
// request is kept.
func (s *Server) answerTask(ctx context.Context, a taskAsker, t idempotency.Task, rs mcp.InputResponseMap) error {
	inputs, ok := s.d.Tasks().(idempotency.TaskInputs)
	if !ok {
		return nil
	}
	for range 8 { // lost races re-read the task; 8 is far more than replicas ever race
		if t.Status != idempotency.TaskInputRequired {
			return nil // resumed by another answer, or ended
		}
		pc, err := parked(t)
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		fresh := false
		for key, r := range rs {
			if _, asked := pc.Asks[key]; !asked {
				continue
			}
			if _, done := pc.Answers[key]; done {
				continue
			}
			er, ok := r.(*mcp.ElicitResult)
			if !ok || er == nil {
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q] is not an elicitation result", key)}
			}
			ans, derr := answerOf(key, er)
			if derr != nil {
				return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: derr.Message}
			}
			if pc.Answers == nil {
				pc.Answers = map[string]abi.InputAnswer{}
			}
			pc.Answers[key], fresh = ans, true
		}
		if !fresh {
			return nil
		}
		complete := len(pc.outstanding()) == 0
		// What is stored, or the resumed run's document, is made before the
		// swap: once the task is working again, a run must follow.
		var next, doc []byte
		if complete {
			doc, err = pc.resumeDoc()
		} else {
			next, err = json.Marshal(pc)
		}
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: encoding its answers: %v", t.ID, err)}
		}
		now, swapped, err := inputs.SwapTaskInput(ctx, t.ID, t.Input, next, complete)
		if err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task store: %v", err)}
		}
		if swapped {
			if complete {
				s.resumeTask(ctx, a, now, pc, doc)
			}
			return nil
		}
		t = now
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q: its answers kept racing with others; send them again", t.ID)}
}

// resumeDoc is the abi.InputResume the resumed run's tool reads: its
// state and the answers under its own request ids.
func (pc *parkedCall) resumeDoc() ([]byte, error) {
	answers := make(map[string]abi.InputAnswer, len(pc.Answers))
	for key, ans := range pc.Answers {
		answers[pc.IDs[key]] = ans
	}
	return json.Marshal(abi.InputResume{State: pc.State, Responses: answers})
}

// resumeTask runs task t's call again with doc (pc's answers), under the
// identity of the request that brought the last of them (lookupTask made
// sure it is the task's caller).
func (s *Server) resumeTask(ctx context.Context, a taskAsker, t idempotency.Task, pc *parkedCall, doc []byte) {
	req := &mcp.CallToolRequest{Session: a.session, Extra: a.extra,
		Params: &mcp.CallToolParamsRaw{Name: pc.Name, Arguments: pc.Args, Meta: pc.Meta}}
	tool := pc.Name
	if rec, ok := s.lookup(pc.Name); ok {
		tool = rec.Name
	}
	s.runTask(ctx, req, t.ID, RunningTask{Caller: t.Caller, Tool: tool, Started: time.Now()}, &taskResume{doc: doc, prev: pc})
}

// elicitTask (2025-11-25 tasks/result) asks the client the outstanding
// questions of task t, one dialog at a time, on the tasks/result request
// and naming the task, then hands the answers to answerTask.
func (s *Server) elicitTask(ctx context.Context, a taskAsker, t idempotency.Task) error {
	if a.session == nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no session to ask the client on"}
	}
	pc, err := parked(t)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	asks := pc.outstanding()
	rs := make(mcp.InputResponseMap, len(asks))
	for _, key := range slices.Sorted(maps.Keys(asks)) {
		q, ok := asks[key].(*mcp.ElicitParams)
		if !ok {
			continue
		}
		p := *q
		p.Meta = mcp.Meta{MetaRelatedTask: map[string]any{"taskId": t.ID}}
		res, err := a.session.Elicit(ctx, &p)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("asking the client for task %q's input %q: %v", t.ID, key, err)}
		}
		rs[key] = res
	}
	return s.answerTask(ctx, a, t, rs)
}
