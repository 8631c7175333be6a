package guest

import (
	"context"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Progress and logs go to whoever called the tool, through the host (the
// toolhost_v1 progress and log functions, docs/ABI.md "Progress and
// logs"): an MCP client that sent a progress token gets each progress as
// notifications/progress, one that set a log level gets each message as
// notifications/message, and the server logs every message. They need no
// grant.
//
//	func count(ctx context.Context, a Args) (Result, error) {
//		for i, item := range a.Items {
//			guest.Progress(ctx, float64(i), float64(len(a.Items)), "counting")
//			...
//		}
//		guest.Log(ctx, abi.LogInfo, "counted")
//	}
//
// Both are cheap and never fail the tool: the host sends at most 10
// progress notifications a second (always the last one), at most 100 log
// messages (64 KiB) per call, cuts a progress message at 1 KiB and a log
// message at 4 KiB, and drops a progress that does not increase. Outside
// WebAssembly (native tests) and outside a call they do nothing.

// callState is one toolhost_call, for the contexts handed to tools.
type callState struct {
	done bool
	// inputRead says Answers has asked the host; input is what it said
	// (nil: the call answers no input request).
	inputRead bool
	input     *abi.InputResume
	// ctx is the call's context, made when a handler first asks for it:
	// most tools take none, and each call would pay two allocations.
	ctx context.Context
}

type callKey struct{}

// current is the call running now, nil between calls.
var current *callState

// beginCall starts a call: Progress and Log report to it, and the
// handlers of RegisterContext get its context, until endCall.
func beginCall() *callState {
	current = &callState{}
	return current
}

// endCall ends c: a context of it kept past the call reports nothing.
func endCall(c *callState) {
	c.done = true
	current = nil
}

// callContext is the running call's context (context.Background()
// outside a call).
func callContext() context.Context {
	c := current
	if c == nil {
		return context.Background()
	}
	if c.ctx == nil {
		c.ctx = context.WithValue(context.Background(), callKey{}, c)
	}
	return c.ctx
}

// live reports whether notes made with ctx belong to the call running
// now. A context of no call (context.Background()) reports to whatever
// call runs; one of a finished call (kept by a goroutine that outlived
// it) reports nothing, so its notes never land on a later call of a
// reused instance.
func live(ctx context.Context) bool {
	if current == nil {
		return false
	}
	c, _ := ctx.Value(callKey{}).(*callState)
	return c == nil || !c.done
}

// hostProgress and hostLog are the host calls; tests replace them.
var (
	hostProgress = importedProgress
	hostLog      = importedLog
)

// Progress reports that the call has done done of total units of work
// (total <= 0: unknown), with an optional message. Each progress must be
// more than the last one; the host drops one that is not.
func Progress(ctx context.Context, done, total float64, msg string) {
	if live(ctx) {
		hostProgress(done, total, msg)
	}
}

// Log sends msg at level to the caller (if it asked for messages of that
// level) and to the server log.
func Log(ctx context.Context, level abi.LogLevel, msg string) {
	if live(ctx) {
		hostLog(level, msg)
	}
}

// RegisterContext is Register for a function that takes the call's
// context first: pass it to Progress and Log.
func RegisterContext[A, R any](name string, opts Options, fn func(context.Context, A) (R, error)) {
	Register(name, opts, func(a A) (R, error) { return fn(callContext(), a) })
}
