package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/registry"
)

// Resources, resource templates and prompts from modules. They are added
// to the SDK's server like tools, so the SDK serves resources/list,
// resources/templates/list and prompts/list, advertises the resources and
// prompts capabilities only while something is offered, and sends
// notifications/resources/list_changed and prompts/list_changed when a
// reload changes them. Each read or get runs through its record's handler:
// the module's own call path (a fresh instance, its memory and output caps)
// under the module's timeout, after the access rules, with one audit line.

// offerSet is what SetTools last gave the SDK, by identity.
type offerSet struct {
	resources map[string]*registry.Resource
	templates map[string]*registry.ResourceTemplate
	prompts   map[string]*registry.Prompt
}

// setOffers makes the SDK's resources, templates and prompts those of o:
// gone ones removed, new or changed ones (re)added. Called with toolsMu
// held.
func (s *Server) setOffers(o registry.Offers) {
	next := offerSet{
		resources: make(map[string]*registry.Resource, len(o.Resources)),
		templates: make(map[string]*registry.ResourceTemplate, len(o.Templates)),
		prompts:   make(map[string]*registry.Prompt, len(o.Prompts)),
	}
	for _, r := range o.Resources {
		next.resources[r.URI] = r
	}
	for _, t := range o.Templates {
		next.templates[t.URITemplate] = t
	}
	for _, p := range o.Prompts {
		next.prompts[p.Name] = p
	}
	if gone := missing(s.offers.resources, next.resources); len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
	}
	if gone := missing(s.offers.templates, next.templates); len(gone) > 0 {
		s.mcp.RemoveResourceTemplates(gone...)
	}
	if gone := missing(s.offers.prompts, next.prompts); len(gone) > 0 {
		s.mcp.RemovePrompts(gone...)
	}
	for _, r := range o.Resources {
		if s.offers.resources[r.URI] != r {
			s.addOffer("resource "+r.URI, func() { s.mcp.AddResource(mcpResource(r), s.readResource(r.Offering)) })
		}
	}
	for _, t := range o.Templates {
		if s.offers.templates[t.URITemplate] != t {
			s.addOffer("resource template "+t.URITemplate, func() { s.mcp.AddResourceTemplate(mcpTemplate(t), s.readResource(t.Offering)) })
		}
	}
	for _, p := range o.Prompts {
		if s.offers.prompts[p.Name] != p {
			s.addOffer("prompt "+p.Name, func() { s.mcp.AddPrompt(mcpPrompt(p), s.getPrompt(p)) })
		}
	}
	s.offers = next
}

// addOffer runs add, which panics where the SDK refuses an entry (a URI
// template its parser does not take): on a hot reload that must cost the
// entry, not the process.
func (s *Server) addOffer(what string, add func()) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Warn("the MCP SDK refuses an offer; not listed", "offer", what, "reason", fmt.Sprint(r))
		}
	}()
	add()
}

func missing[T any](old, next map[string]T) []string {
	var gone []string
	for k := range old {
		if _, ok := next[k]; !ok {
			gone = append(gone, k)
		}
	}
	return gone
}

// convert re-decodes an abi listing as its MCP type: the manifest uses
// MCP's field names, so the JSON is the same.
func convert[T any](v any) *T {
	b, _ := json.Marshal(v)
	out := new(T)
	_ = json.Unmarshal(b, out)
	return out
}

func mcpResource(r *registry.Resource) *mcp.Resource {
	out := convert[mcp.Resource](r.Resource)
	out.Meta = mcp.Meta{MetaToolModule: r.Module}
	return out
}

func mcpTemplate(t *registry.ResourceTemplate) *mcp.ResourceTemplate {
	out := convert[mcp.ResourceTemplate](t.ResourceTemplate)
	out.Meta = mcp.Meta{MetaToolModule: t.Module}
	return out
}

func mcpPrompt(p *registry.Prompt) *mcp.Prompt {
	out := convert[mcp.Prompt](p.Prompt)
	out.Meta = mcp.Meta{MetaToolModule: p.Module}
	return out
}

// readResource serves a resources/read of a resource, or of a URI its
// template matches, through o.
func (s *Server) readResource(o registry.Offering) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		c := &offerCall{kind: "resource", name: uri, caller: requestCaller(req.Extra), requestID: newRequestID()}
		if d := s.decideOffer(ctx, c); !d.Allowed {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		args, _ := json.Marshal(abi.ReadResourceArgs{URI: uri})
		raw, err := s.runOffer(ctx, c, o, args)
		if err != nil {
			return nil, err
		}
		var res mcp.ReadResourceResult
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Contents) == 0 {
			return nil, s.offerFault(c, "the module's read of %s is not {\"contents\": [...]} with at least one item", uri)
		}
		for _, rc := range res.Contents {
			if rc == nil || rc.URI == "" {
				return nil, s.offerFault(c, "the module's read of %s holds a content item without a uri", uri)
			}
		}
		res.Meta = mcp.Meta{MetaRequestID: c.requestID}
		s.auditOffer(c, "ok", len(raw))
		return &res, nil
	}
}

// getPrompt serves a prompts/get of p.
func (s *Server) getPrompt(p *registry.Prompt) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		c := &offerCall{kind: "prompt", name: p.Name, caller: requestCaller(req.Extra), requestID: newRequestID()}
		if d := s.decideOffer(ctx, c); !d.Allowed {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", p.Name)}
		}
		for _, a := range p.Arguments {
			if _, ok := req.Params.Arguments[a.Name]; a.Required && !ok {
				s.auditOffer(c, "schema", 0)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt %q: argument %q is required", p.Name, a.Name)}
			}
		}
		args, _ := json.Marshal(abi.GetPromptArgs{Name: p.Name, Arguments: req.Params.Arguments})
		raw, err := s.runOffer(ctx, c, p.Offering, args)
		if err != nil {
			return nil, err
		}
		var res mcp.GetPromptResult
		if err := json.Unmarshal(raw, &res); err != nil || res.Messages == nil {
			return nil, s.offerFault(c, "the module's prompt %s is not {\"messages\": [...]}", p.Name)
		}
		for _, m := range res.Messages {
			if m == nil || (m.Role != "user" && m.Role != "assistant") || m.Content == nil {
				return nil, s.offerFault(c, "the module's prompt %s holds a message without role user or assistant and a content", p.Name)
			}
		}
		res.Meta = mcp.Meta{MetaRequestID: c.requestID}
		s.auditOffer(c, "ok", len(raw))
		return &res, nil
	}
}

// offerCall is what the audit line needs to know of a read or get.
type offerCall struct {
	kind, name, caller, requestID string
	start                         time.Time
	denied                        *access.Decision
}

// decideOffer asks the access rules, and writes the audit line of a
// refusal.
func (s *Server) decideOffer(ctx context.Context, c *offerCall) access.Decision {
	c.start = time.Now()
	w := whoFrom(ctx)
	d := access.Decision{Allowed: true}
	if !s.opts.Access.Empty() {
		if c.kind == "resource" {
			d = s.opts.Access.DecideResource(w.identity, w.scopes, c.name)
		} else {
			d = s.opts.Access.DecidePrompt(w.identity, w.scopes, c.name)
		}
	}
	if !d.Allowed {
		c.denied = &d
		s.auditOffer(c, "denied", 0)
	}
	return d
}

// runOffer runs one read or get on its module: a place in the caller's
// cap, the host's waits under the caller's context, then the module's
// timeout, as a tool's attempt has. The error is a JSON-RPC error with
// the kind of failure in its message, audited; a result is audited by
// the caller once it has checked its shape.
func (s *Server) runOffer(ctx context.Context, c *offerCall, o registry.Offering, args json.RawMessage) (json.RawMessage, error) {
	s.inflight.enter()
	defer s.inflight.exit()
	if !s.callers.enter(c.caller) {
		s.auditOffer(c, "rate_limited", 0)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("rate_limited: caller %q already has %d calls in flight, this server's limit per caller", c.caller, s.opts.MaxCallsPerCaller)}
	}
	defer s.callers.exit(c.caller)
	req := registry.Request{Args: args, Caller: c.caller}
	if p, ok := o.Handler.(registry.Preparer); ok {
		pctx, done, err := p.Prepare(ctx, req)
		if err != nil {
			return nil, s.offerError(ctx, c, err)
		}
		defer done()
		ctx = pctx
	}
	actx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var raw json.RawMessage
	var err error
	if rh, ok := o.Handler.(registry.RequestHandler); ok {
		raw, err = rh.HandleRequest(actx, req)
	} else {
		raw, err = o.Handler.Handle(actx, args)
	}
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			s.auditOffer(c, "timeout", 0)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("timeout: %s %s took longer than %v", c.kind, c.name, o.Timeout)}
		}
		return nil, s.offerError(ctx, c, err)
	}
	return raw, nil
}

// offerError is the JSON-RPC error of a failed read or get, audited: a
// guest's schema error is the caller's (-32602), anything else internal.
func (s *Server) offerError(ctx context.Context, c *offerCall, err error) error {
	kind := "internal"
	code := int64(jsonrpc.CodeInternalError)
	var ge *abi.Error
	switch {
	case ctx.Err() != nil:
		kind = "cancelled"
	case errors.As(err, &ge):
		kind = string(ge.Kind)
		if ge.Kind == abi.KindSchema {
			code = jsonrpc.CodeInvalidParams
		}
	}
	s.auditOffer(c, kind, 0)
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf("%s: %s %s: %v", kind, c.kind, c.name, err)}
}

// offerFault is a result the module returned in the wrong shape.
func (s *Server) offerFault(c *offerCall, format string, args ...any) error {
	s.auditOffer(c, "internal", 0)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal: " + fmt.Sprintf(format, args...)}
}

// auditOffer writes the one audit line of a read or get.
func (s *Server) auditOffer(c *offerCall, outcome string, bytes int) {
	attrs := []slog.Attr{
		slog.String("request_id", c.requestID),
		slog.String(c.kind, c.name),
		slog.String("caller", c.caller),
		slog.String("outcome", outcome),
		slog.Float64("duration_ms", float64(time.Since(c.start))/float64(time.Millisecond)),
	}
	if bytes > 0 {
		attrs = append(attrs, slog.Int("bytes", bytes))
	}
	if c.denied != nil {
		attrs = append(attrs, slog.Int("access_rule", c.denied.Rule), slog.Int("access_line", c.denied.Line))
	}
	msg := "read"
	if c.kind == "prompt" {
		msg = "get"
	}
	s.logger.LogAttrs(context.Background(), slog.LevelInfo, msg, attrs...)
}

// requestCaller is the authenticated identity of a request, or "".
func requestCaller(x *mcp.RequestExtra) string {
	if x != nil && x.TokenInfo != nil {
		return x.TokenInfo.UserID
	}
	return ""
}

// offering reports whether a resources/ or prompts/ method is served now:
// only while some module offers what it is about, as the capabilities
// say. Any other method is served; what names what is missing.
func (s *Server) offering(method string) (what string, ok bool) {
	var kind string
	switch method {
	case "resources/list", "resources/templates/list", "resources/read":
		kind = "resources"
	case "prompts/list", "prompts/get":
		kind = "prompts"
	default:
		return "", true
	}
	s.toolsMu.Lock()
	defer s.toolsMu.Unlock()
	if kind == "prompts" {
		return kind, len(s.offers.prompts) > 0
	}
	return kind, len(s.offers.resources) > 0 || len(s.offers.templates) > 0
}

// noOffers is the refusal of a resources/ or prompts/ method while
// nothing is offered. (Over stdio the SDK replaces a -32601's message by
// its own "method not found: …"; over HTTP the front answers first.)
func noOffers(method, what string) string {
	return fmt.Sprintf("method %q not found: no module in this server's plugins folder offers %s", method, what)
}

// keep is a new slice of the xs ok admits (never xs itself: the SDK's
// listings are shared).
func keep[T any](xs []T, ok func(T) bool) []T {
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
}

// visibleOffers filters a resources, templates or prompts listing for w,
// building new results (the SDK's are shared). Other results pass.
func (s *Server) visibleOffers(w who, res mcp.Result) mcp.Result {
	p := s.opts.Access
	switch list := res.(type) {
	case *mcp.ListResourcesResult:
		out := *list
		out.Resources = keep(list.Resources, func(r *mcp.Resource) bool { return p.DecideResource(w.identity, w.scopes, r.URI).Allowed })
		return &out
	case *mcp.ListResourceTemplatesResult:
		out := *list
		out.ResourceTemplates = keep(list.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
			return p.DecideResource(w.identity, w.scopes, t.URITemplate).Allowed
		})
		return &out
	case *mcp.ListPromptsResult:
		out := *list
		out.Prompts = keep(list.Prompts, func(pr *mcp.Prompt) bool { return p.DecidePrompt(w.identity, w.scopes, pr.Name).Allowed })
		return &out
	}
	return res
}
