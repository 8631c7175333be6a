package transport

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guestStack is the frame that makes a request that runs a guest get its
// whole stack at once: the SDK starts a new goroutine for every request,
// on the runtime's smallest stack, and a tools/call through the
// dispatcher, validation, the host and wazero needs between 16 and 32 KiB
// of it. Grown on demand that is four doublings, each copying the whole
// stack so far and walking every frame's tables: 8% of a reused call's CPU
// in process (docs/BENCHMARKS.md, "Issue 26, session 10"), and it evicts
// enough of the cache that the guest's own code runs slower after it. One
// growth at the top, while the stack is still shallow, costs 1.5–3 µs.
const guestStack = 16 << 10

// runsGuest are the methods whose handling may run a guest.
var runsGuest = map[string]bool{"tools/call": true, "resources/read": true, "prompts/get": true}

// growStack is the outermost receiving middleware: it grows the request
// goroutine's stack once for the methods that run a guest.
func growStack(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if runsGuest[method] {
			growTo16K()
		}
		return next(ctx, method, req)
	}
}

// growTo16K needs a frame of guestStack bytes, so the runtime grows the
// stack to fit it in one step. The frame is touched through keepFrame so the
// compiler cannot drop it.
//
//go:noinline
func growTo16K() {
	var frame [guestStack]byte
	keepFrame(frame[:])
}

//go:noinline
func keepFrame(b []byte) {
	if b[len(b)-1] != 0 {
		panic("transport: growTo16K's frame is not zero")
	}
}
