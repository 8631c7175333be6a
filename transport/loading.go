package transport

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Loading is what the server waits for so that no tool is answered as
// missing because its module still compiles (loader.Live is one).
type Loading interface {
	// Listed is closed once every module file present at start is
	// listed or refused.
	Listed() <-chan struct{}
	// AwaitLoading waits, under ctx, until no module file is compiling to
	// be listed; false when ctx ended first.
	AwaitLoading(ctx context.Context) bool
}

// addStartWait holds a tools/list back, under its request's context,
// until every module present at start is listed or refused: a client's
// first list is the whole list, whatever it does with list_changed. A
// module that carries its manifest, or one in the describe cache, is
// listed at once; only the others are waited for.
func (s *Server) addStartWait() {
	if s.opts.Loading == nil {
		return
	}
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				select {
				case <-s.opts.Loading.Listed():
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return next(ctx, method, req)
		}
	})
}

// awaitTool, for a call that names no tool the server lists now, waits
// under the call's context for the modules compiling to be listed (at
// start or after a file was dropped in): the tool may be in one of them.
// A name that is listed, or the plan tool's, never waits.
func (s *Server) awaitTool(ctx context.Context, name string) {
	if s.opts.Loading == nil || (s.opts.Plans != nil && isPlanTool(name)) {
		return
	}
	if _, ok := s.lookup(name); ok {
		return
	}
	s.opts.Loading.AwaitLoading(ctx)
}
