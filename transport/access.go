package transport

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
)

// Per-caller tool access (Options.Access). The SDK keeps one tool list for
// every session, so the per-caller view is made here: a receiving
// middleware filters each tools/list answer for the caller who asked, and
// every call and plan step is checked where its name is resolved. A tool
// the caller may not call is, to that caller, a tool that does not exist:
// unlisted, and not_found with the very envelope of an unknown name, so
// that neither the answer nor the path it takes tells the two apart.

// whoKey carries the caller of the request being handled in its context,
// so that plan steps, run deep inside toolhost.plan, are checked for the
// caller who asked for the plan.
type whoKey struct{}

// who is a caller as access rules see it: the token's identity and the
// scopes it carries (none for static tokens, none without tokens).
type who struct {
	identity string
	scopes   []string
}

// addAccess installs the middleware that records the caller in the
// request's context and filters tools/list for it. It must be added after
// the tools/call takeover in New, so that it wraps it.
func (s *Server) addAccess() {
	if s.opts.Access.Empty() {
		return
	}
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			w := whoOf(req)
			res, err := next(context.WithValue(ctx, whoKey{}, w), method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				return s.visible(w, list), nil
			}
			if err == nil {
				return s.visibleOffers(w, res), nil
			}
			return res, err
		}
	})
}

func whoOf(req mcp.Request) who {
	if x := req.GetExtra(); x != nil && x.TokenInfo != nil {
		return who{identity: x.TokenInfo.UserID, scopes: x.TokenInfo.Scopes}
	}
	return who{}
}

// whoFrom is the caller recorded by the middleware; a context without one
// (a path the middleware did not see) is the anonymous caller with no
// scopes, which rules can only restrict further.
func whoFrom(ctx context.Context) who {
	w, _ := ctx.Value(whoKey{}).(who)
	return w
}

// visible returns list with only the tools w may call. The SDK's result
// and its tools are shared, so a new result is built and nothing in it is
// modified.
func (s *Server) visible(w who, list *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *list
	out.Tools = make([]*mcp.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		name, _ := t.Meta[MetaToolName].(string)
		if name == "" {
			name = t.Name
		}
		if s.opts.Access.Decide(w.identity, w.scopes, name).Allowed {
			out.Tools = append(out.Tools, t)
		}
	}
	return &out
}

// mayCall says whether the caller of ctx may call the tool with this
// manifest name.
func (s *Server) mayCall(ctx context.Context, tool string) bool {
	w := whoFrom(ctx)
	return s.opts.Access.Decide(w.identity, w.scopes, tool).Allowed
}

// permitted resolves a name a client sent (see resolve) and checks the
// caller of ctx may call the tool. A tool it may not call is not_found
// with the message of an unknown name; c records the rule that decided,
// for the audit line. The manifest name is returned with a refusal, as
// resolve does, for the audit line only.
func (s *Server) permitted(ctx context.Context, c *callInfo, name string, meta map[string]any) (string, *dispatcher.DispatchError) {
	s.awaitTool(ctx, name)
	tool, derr := s.resolve(name, meta)
	checked := tool
	if tool == "" && s.opts.Plans != nil && isPlanTool(name) {
		checked = PlanToolName // a denied toolhost.plan falls through to here
	}
	if checked == "" || s.opts.Access.Empty() {
		return tool, derr
	}
	w := whoFrom(ctx)
	if d := s.opts.Access.Decide(w.identity, w.scopes, checked); !d.Allowed {
		c.denied = &d
		return checked, notFound(name)
	}
	return tool, derr
}

// notFound is the refusal of a name the caller cannot call: unknown,
// hidden, or denied by an access rule alike.
func notFound(name string) *dispatcher.DispatchError {
	return refusal(dispatcher.KindNotFound, "no tool named %q (toolhost list shows the tools this server has)", name)
}

// deniedAttrs marks a denied call's audit line: outcome denied, and the
// rule that decided (its 1-based index and line in the config file; 0 when
// no rule matched).
func deniedAttrs(c *callInfo, attrs []slog.Attr) []slog.Attr {
	if c.denied == nil {
		return attrs
	}
	for i, a := range attrs {
		if a.Key == "outcome" {
			attrs[i] = slog.String("outcome", "denied")
		}
	}
	return append(attrs, slog.Int("access_rule", c.denied.Rule), slog.Int("access_line", c.denied.Line))
}
