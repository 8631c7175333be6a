package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host/internal/warm"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/attempt"
	"github.com/toolhost/toolhost/third_party/wazero/sys"
)

// Request is one call of one of a module's tools.
type Request struct {
	// Tool is the tool's manifest name; Args its arguments (JSON).
	Tool string
	Args []byte
	// Limits override the runtime's limits field by field.
	Limits Limits
	// Caller is the identity the call runs for ("" is the anonymous
	// caller). A warm instance serves the calls of one caller only.
	Caller string
	// Reuse allows the call to run in one of Caller's warm instances of
	// the tool: the operator has not turned reuse off for it. It is
	// honoured only when the tool's manifest says "instances": "reuse"
	// and the runtime's reuse is on (see Module.Reusable); otherwise the
	// call gets a fresh instance.
	Reuse bool
}

// Call runs tool with args in a fresh instance and returns its result JSON.
// lim overrides the runtime's limits field by field. It is Do with a
// Request of those fields.
func (m *Module) Call(ctx context.Context, tool string, args []byte, lim Limits) (json.RawMessage, error) {
	return m.Do(ctx, Request{Tool: tool, Args: args, Limits: lim})
}

// Do runs one call, in a fresh instance or, when req.Reuse allows and the
// tool declares it, in a warm instance of req.Caller's (one call at a time
// in an instance; see Reuse for when one is retired), and returns the
// result JSON.
//
// The error is one of:
//   - *abi.Error: the guest reported an error (its kind is the guest's), or
//     the host refused args before the guest saw them (KindSchema: not
//     UTF-8);
//   - an error wrapping ctx's error when ctx ended first (the instance is
//     stopped: WithCloseOnContextDone for code, sleeper for sleeps);
//   - *Fault: the guest trapped, exited, or broke the ABI;
//   - any of these wrapped in a *toolhostv1.EgressRefusedError when the host refused
//     one of the call's egress requests.
//
// Do never panics on guest behaviour.
func (m *Module) Do(ctx context.Context, req Request) (json.RawMessage, error) {
	tc := m.rt.grants.Call(moduleName(m.Path))
	ctx = toolhostv1.WithCall(ctx, tc)
	ctx, notes := m.withNoteCall(ctx, req.Tool)
	attempt.From(ctx).Enter()
	res, err := m.call(ctx, req)
	endNotes(ctx, notes)
	return res, tc.Blame(err)
}

func (m *Module) call(ctx context.Context, req Request) (json.RawMessage, error) {
	// Its compile runs: a fresh instance on the interpreter meanwhile,
	// chosen by Prepare or here.
	f := preparedForm(ctx, m)
	if f == nil {
		if f = m.interpretedFor(ctx); f != nil {
			defer m.doneInterpreting(f)
		}
	}
	if f != nil {
		req.Reuse = false
		return f.mod.call(ctx, req)
	}
	tool, args := req.Tool, req.Args
	lim := limitsWithDefaults(req.Limits, m.rt.cfg.Limits)
	// The ABI promises the guest a JSON object or nothing (docs/ABI.md).
	// Arguments of white space only are nothing. Arguments that are not
	// UTF-8 are no JSON text at all, yet pass schema validation
	// (encoding/json replaces bad bytes as it reads); handed to a guest
	// that echoes them, they came back as an invalid response, an
	// internal error charged to the tool's breaker.
	if len(bytes.TrimSpace(args)) == 0 {
		args = nil
	} else if !utf8.Valid(args) {
		return nil, &abi.Error{Kind: abi.KindSchema, Message: "arguments are not valid UTF-8"}
	}
	out := &capWriter{limit: lim.LogBytes}
	defer m.logOutput(tool, out)

	// A call whose context has already ended would only stop, and so
	// retire, a good instance: it gets the fresh path's error instead.
	if req.Reuse && ctx.Err() == nil && m.Reusable(tool) {
		key := warm.Key[*Module]{Mod: m, Tool: tool, Caller: req.Caller, Memory: lim.MemoryBytes}
		w, err := m.rt.warm.Acquire(ctx, key, warmMaker{m, lim}, out)
		if err != nil {
			return nil, m.fault(ctx, tool, "instantiating", err, out)
		}
		if w != nil {
			res, err := m.invoke(ctx, w.Inst, tool, args, lim, out)
			m.rt.warm.Release(ctx, w, err)
			return res, err
		}
		// No room under the bounds: a one-off fresh instance.
	}
	release, err := m.admitFresh(ctx)
	var inst *instance
	if err == nil {
		defer release()
		inst, err = m.instantiate(ctx, lim, out)
	}
	var ae *abi.Error
	if errors.As(err, &ae) {
		return nil, ae // compiling on demand found the file changed: not the tool's fault
	}
	if err != nil {
		return nil, m.fault(ctx, tool, "instantiating", err, out)
	}
	defer inst.close()
	return m.invoke(ctx, inst, tool, args, lim, out)
}

// invoke runs one toolhost_call in inst: the name and arguments in, the
// response out and checked.
func (m *Module) invoke(ctx context.Context, inst *instance, tool string, args []byte, lim Limits, out *capWriter) (json.RawMessage, error) {
	if m.ext != nil {
		return m.invokeExtism(ctx, inst, tool, args, lim, out)
	}
	alloc, call := inst.exports()
	namePtr, err := inst.write(ctx, alloc, []byte(tool))
	if err != nil {
		return nil, m.fault(ctx, tool, "passing the tool name", err, out)
	}
	argsPtr, err := inst.write(ctx, alloc, args)
	if err != nil {
		return nil, m.fault(ctx, tool, "passing the arguments", err, out)
	}
	// The dispatcher weighs a timeout by the time the guest itself had.
	started := time.Now()
	if deadline, ok := ctx.Deadline(); ok {
		defer m.rt.kick.Remove(m.rt.kick.Add(deadline))
	}
	res, err := call.Call(ctx, uint64(namePtr), uint64(len(tool)), uint64(argsPtr), uint64(len(args)))
	attempt.From(ctx).AddGuest(time.Since(started))
	if err != nil {
		return nil, m.fault(ctx, tool, abi.ExportCall, err, out)
	}
	b, err := inst.read(res[0], lim.OutputBytes)
	if err != nil {
		return nil, &Fault{Module: m.Path, Tool: tool, Reason: "toolhost_call " + err.Error()}
	}
	resp, err := abi.ParseResponse(b)
	if err != nil {
		return nil, &Fault{Module: m.Path, Tool: tool, Reason: err.Error(), Err: err}
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	if resp.Input != nil {
		// Not a failure: the dispatcher hands it up as the call's answer.
		return nil, resp.Input
	}
	return resp.Result, nil
}

// fault classifies a failed guest call: the context's end when that is what
// stopped it, otherwise a Fault saying what the guest did.
func (m *Module) fault(ctx context.Context, tool, during string, err error, out *capWriter) error {
	if cerr := ctx.Err(); cerr != nil {
		// Wrap ctx.Err() itself, as documented, so errors.Is(err,
		// context.DeadlineExceeded) holds even when the caller set a cause
		// (context.WithTimeoutCause); wrap the cause too when there is one.
		if cause := context.Cause(ctx); cause != nil && cause != cerr {
			return fmt.Errorf("tool %s stopped: %w: %w", tool, cerr, cause)
		}
		return fmt.Errorf("tool %s stopped: %w", tool, cerr)
	}
	// wazero's message ends in a multi-line wasm stack trace: keep its
	// first line for the reason (a model reads it) and let the log keep
	// the rest.
	first, _, _ := strings.Cut(err.Error(), "\n")
	reason := fmt.Sprintf("%s: %s", during, first)
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		reason = fmt.Sprintf("%s: guest exited with code %d", during, exit.ExitCode())
	}
	if last := lastFatalLine(out.buf); last != "" {
		reason += " (guest said: " + last + ")"
	}
	return &Fault{Module: m.Path, Tool: tool, Reason: reason, Err: err}
}

// lastFatalLine finds the line a dying Go (or Rust, or C) runtime writes
// to stderr before it traps — "fatal error: out of memory", "panic: ..." —
// which says far more than the trap itself. A "fatal error:" or "panic:"
// line wins over the "runtime: ..." lines around it: after "fatal error:
// stack overflow" the Go traceback goes on with lines such as "runtime: g
// 0: unexpected return pc for runtime.morestack", which say nothing useful.
func lastFatalLine(out []byte) string {
	lines := strings.Split(string(out), "\n")
	for _, prefixes := range [][]string{{"fatal error:", "panic:"}, {"runtime: "}} {
		for i := len(lines) - 1; i >= 0; i-- {
			l := strings.TrimSpace(lines[i])
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					return l
				}
			}
		}
	}
	return ""
}

func (m *Module) logOutput(tool string, out *capWriter) {
	if len(out.buf) == 0 && out.dropped == 0 {
		return
	}
	m.rt.logger.Info("guest output", slog.String("module", m.Path), slog.String("tool", tool),
		slog.String("output", string(out.buf)), slog.Int("dropped_bytes", out.dropped))
}

// capWriter keeps the first limit bytes written to it and counts the rest.
// Guest stdout and stderr share one, so a chatty guest costs the host at
// most limit bytes per call.
type capWriter struct {
	limit   int
	buf     []byte
	dropped int
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.limit - len(w.buf)
	if room >= len(p) {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	w.buf = append(w.buf, p[:max(room, 0)]...)
	w.dropped += len(p) - max(room, 0)
	return len(p), nil
}
