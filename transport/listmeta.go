package transport

import (
	"context"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaToolWarm is set on each listed tool that has warm instances, when
// the server has Options.ListMeta: {"idle", "busy", "warming", "callers"},
// the tool's warm-instance pools at the time of the tools/list.
const MetaToolWarm = "toolhost/warm"

// addListMeta installs the middleware that adds Options.ListMeta's facts
// to each tools/list answer. It is added first, so innermost: access
// filtering and the revision's shape apply to what it returns.
func (s *Server) addListMeta() {
	if s.opts.ListMeta == nil {
		return
	}
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				return withListMeta(list, s.opts.ListMeta()), nil
			}
			return res, err
		}
	})
}

// withListMeta returns list with facts added to the _meta of the tools
// they name. The SDK's result and its tools are shared, so each changed
// tool is a copy.
func withListMeta(list *mcp.ListToolsResult, facts map[string]map[string]any) *mcp.ListToolsResult {
	if len(facts) == 0 {
		return list
	}
	out := *list
	out.Tools = make([]*mcp.Tool, len(list.Tools))
	for i, t := range list.Tools {
		name, _ := t.Meta[MetaToolName].(string)
		f, ok := facts[name]
		if !ok {
			out.Tools[i] = t
			continue
		}
		c := *t
		c.Meta = maps.Clone(t.Meta)
		if c.Meta == nil {
			c.Meta = mcp.Meta{}
		}
		maps.Copy(c.Meta, f)
		out.Tools[i] = &c
	}
	return &out
}
