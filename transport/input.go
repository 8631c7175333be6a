package transport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/guestinput"
)

// Input requests. A tool that needs the user's answer first responds with
// an abi.InputRequest (dispatcher.Outcome.Input). toolhost relays it as
// MCP elicitation:
//
//   - at 2026-07-28 (stateless), as a result of resultType
//     "input_required": the requests under inputRequests, the tool's state
//     signed into requestState. The client retries tools/call with
//     inputResponses and requestState; resume verifies them and the tool
//     runs again, reading the answers (toolhost_v1.input).
//   - at 2025-11-25, to a client that declared the elicitation
//     capability, as elicitation/create requests on the call's own stream,
//     then the tool runs again within the same tools/call. The state never
//     leaves the server.
//
// A client that can do neither gets an isError result saying so. The
// SDK's own multi-round-trip middleware does this for handlers it calls;
// toolhost's tools/call goes around the SDK's handler lookup (see
// protocolMiddleware), so it is done here, with the SDK's types and
// ServerSession.Elicit.

// maxElicitRounds bounds the elicitation/create rounds of one 2025-11-25
// call (a tool that asks again after every answer); the Go SDK's client
// gives up on a 2026-07-28 exchange after 10 rounds.
const maxElicitRounds = 4

// resume checks the requestState and inputResponses a retried call
// carries and returns ctx holding the tool's answers. A call with
// neither is not a resumed one.
func (s *Server) resume(ctx context.Context, c *callInfo, p *mcp.CallToolParamsRaw) (context.Context, *dispatcher.DispatchError) {
	if p.RequestState == "" && len(p.InputResponses) == 0 {
		return ctx, nil
	}
	if p.RequestState == "" {
		return ctx, refusal(dispatcher.KindSchema, "inputResponses came without requestState: send back the requestState of the result that asked")
	}
	fp, err := dispatcher.Fingerprint(c.tool, p.Arguments)
	if err != nil {
		return ctx, refusal(dispatcher.KindSchema, "arguments are not valid JSON: %v", err)
	}
	st, err := s.sealer.open(p.RequestState, c.tool, c.caller, fp)
	if err != nil {
		return ctx, refusal(dispatcher.KindSchema, "%v", err)
	}
	answers, derr := answersFor(st.IDs, p.InputResponses)
	if derr != nil {
		return ctx, derr
	}
	doc, err := json.Marshal(abi.InputResume{State: string(st.State), Responses: answers})
	if err != nil {
		return ctx, refusal(dispatcher.KindSchema, "inputResponses: %v", err)
	}
	return guestinput.WithResume(ctx, doc), nil
}

// answersFor takes one elicitation answer per request asked, and nothing
// else.
func answersFor(ids []string, rs mcp.InputResponseMap) (map[string]abi.InputAnswer, *dispatcher.DispatchError) {
	out := make(map[string]abi.InputAnswer, len(ids))
	for _, id := range ids {
		r, ok := rs[id]
		if !ok {
			return nil, refusal(dispatcher.KindSchema, "inputResponses has no answer to input request %q", id)
		}
		er, ok := r.(*mcp.ElicitResult)
		if !ok || er == nil {
			return nil, refusal(dispatcher.KindSchema, "inputResponses[%q] is not an elicitation result", id)
		}
		a, derr := answerOf(id, er)
		if derr != nil {
			return nil, derr
		}
		out[id] = a
	}
	for id := range rs {
		if !slices.Contains(ids, id) {
			return nil, refusal(dispatcher.KindSchema, "inputResponses[%q] answers no request the tool made", id)
		}
	}
	return out, nil
}

func answerOf(id string, er *mcp.ElicitResult) (abi.InputAnswer, *dispatcher.DispatchError) {
	switch er.Action {
	case abi.InputAccept, abi.InputDecline, abi.InputCancel:
	default:
		return abi.InputAnswer{}, refusal(dispatcher.KindSchema, "inputResponses[%q]: action %q is not accept, decline or cancel", id, er.Action)
	}
	a := abi.InputAnswer{Action: er.Action}
	if er.Action == abi.InputAccept {
		for k, v := range er.Content {
			if !primitiveAnswer(v) {
				return abi.InputAnswer{}, refusal(dispatcher.KindSchema, "inputResponses[%q].content[%q] is not a string, number, boolean or list of strings, all a form may hold", id, k)
			}
		}
		a.Content = er.Content
	}
	return a, nil
}

// primitiveAnswer reports whether v is a value an elicitation form can
// hold (its properties are primitives, or a multi-select of strings): a
// client cannot hand a tool nested documents its form never asked for.
func primitiveAnswer(v any) bool {
	switch v := v.(type) {
	case string, float64, json.Number, bool, nil:
		return true
	case []any:
		for _, e := range v {
			if _, ok := e.(string); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// elicitRounds asks a 2025-11-25 client that can answer, through
// elicitation/create, and runs the tool again with the answers, until it
// answers something else or maxElicitRounds have passed. A stateless
// client, or one that cannot answer, gets o back unchanged.
func (s *Server) elicitRounds(ctx context.Context, req *mcp.CallToolRequest, c *callInfo, o dispatcher.Outcome) dispatcher.Outcome {
	if isStateless(sessionVersion(req)) || inTask(ctx) {
		return o
	}
	for round := 0; o.Input != nil && round < maxElicitRounds; round++ {
		if canElicit(req, o.Input) != nil {
			return o
		}
		doc, derr := s.elicit(ctx, req, o.Input)
		if derr != nil {
			return dispatcher.Outcome{Err: derr, Attempts: o.Attempts}
		}
		o = s.dispatch(guestinput.WithResume(withClientNotes(ctx, req, c.requestID, true), doc), c, req.Params)
	}
	if o.Input != nil {
		o = dispatcher.Outcome{Attempts: o.Attempts, Err: refusal(dispatcher.KindSchema,
			"tool %s asked for input %d times in one call; this server relays at most %d rounds", c.tool, maxElicitRounds+1, maxElicitRounds)}
	}
	return o
}

// elicit asks the client each request of ir in turn (one dialog at a
// time) and returns the tool's resume document.
func (s *Server) elicit(ctx context.Context, req *mcp.CallToolRequest, ir *abi.InputRequest) ([]byte, *dispatcher.DispatchError) {
	answers := make(map[string]abi.InputAnswer, len(ir.Requests))
	for _, id := range slices.Sorted(maps.Keys(ir.Requests)) {
		res, err := req.Session.Elicit(ctx, elicitParams(ir.Requests[id]))
		if err != nil {
			if ctx.Err() != nil {
				return nil, refusal(dispatcher.KindInternal, "the call was cancelled while the user was asked for input")
			}
			return nil, refusal(dispatcher.KindInternal, "asking the client for input %q: %v", id, err)
		}
		a, derr := answerOf(id, res)
		if derr != nil {
			return nil, derr
		}
		answers[id] = a
	}
	doc, err := json.Marshal(abi.InputResume{State: ir.State, Responses: answers})
	if err != nil {
		return nil, refusal(dispatcher.KindInternal, "encoding the answers: %v", err)
	}
	return doc, nil
}

// inputResult is the answer to a call whose tool asked for input and that
// elicitRounds did not answer: input_required at 2026-07-28, else the
// error that says why the client cannot be asked.
func (s *Server) inputResult(ctx context.Context, req *mcp.CallToolRequest, c *callInfo, ir *abi.InputRequest) *mcp.CallToolResult {
	if ask, ok := ctx.Value(taskAskKey{}).(*taskAsk); ok {
		// runTask parks the task with the request, or ends it with this.
		ask.ir, ask.c = ir, c
		return errorResult(unanswerable(c.tool, ir, errTaskInput), c.requestID)
	}
	if err := canElicit(req, ir); err != nil || !isStateless(sessionVersion(req)) {
		if err == nil {
			err = errors.New("its session is of a revision without input_required")
		}
		return errorResult(unanswerable(c.tool, ir, err), c.requestID)
	}
	fp, err := dispatcher.Fingerprint(c.tool, req.Params.Arguments)
	if err != nil {
		return errorResult(refusal(dispatcher.KindSchema, "arguments are not valid JSON: %v", err), c.requestID)
	}
	token, err := s.sealer.seal(sealedState{Tool: c.tool, Caller: c.caller, Args: fp,
		IDs: slices.Collect(maps.Keys(ir.Requests)), State: []byte(ir.State)})
	if err != nil {
		return errorResult(refusal(dispatcher.KindInternal, "sealing the input state: %v", err), c.requestID)
	}
	reqs := make(mcp.InputRequestMap, len(ir.Requests))
	for id, q := range ir.Requests {
		reqs[id] = elicitParams(q)
	}
	res := &mcp.CallToolResult{Meta: mcp.Meta{MetaRequestID: c.requestID}, InputRequests: reqs, RequestState: token}
	markInputRequired(res)
	return res
}

// errTaskInput: a task's run has no request of its own to answer with
// input_required or to carry elicitation/create; the task itself waits in
// input_required instead (taskinput.go), and this is what a run says when
// it cannot.
var errTaskInput = errors.New("the call runs as an MCP task whose input request could not be kept")

// inTask reports whether ctx is a task's run (runTask).
func inTask(ctx context.Context) bool {
	_, ok := ctx.Value(taskIDKey{}).(string)
	return ok
}

// elicitParams is one request as MCP elicitation asks it.
func elicitParams(q abi.InputQuestion) *mcp.ElicitParams {
	p := &mcp.ElicitParams{Mode: q.Mode, Message: q.Message}
	if q.Mode == abi.InputURL {
		p.URL = q.URL
		p.ElicitationID = newElicitationID()
	} else {
		p.RequestedSchema = q.Schema
	}
	return p
}

func newElicitationID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// canElicit says why the calling client cannot answer ir, or nil (see
// canElicitWith).
func canElicit(req *mcp.CallToolRequest, ir *abi.InputRequest) error {
	return canElicitWith(elicitCaps(req), ir)
}

// elicitCaps is the elicitation capability the calling client declared,
// nil when none.
func elicitCaps(req *mcp.CallToolRequest) *mcp.ElicitationCapabilities {
	if req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil && ip.Capabilities != nil {
			return ip.Capabilities.Elicitation
		}
	}
	return nil
}

// canElicitWith says why a client with caps cannot answer ir, or nil: it
// must have declared the elicitation capability, with url for a URL
// request (form is assumed when it named neither, as the spec allows).
func canElicitWith(caps *mcp.ElicitationCapabilities, ir *abi.InputRequest) error {
	if caps == nil {
		return errors.New("it declared no elicitation capability")
	}
	for _, q := range ir.Requests {
		switch {
		case q.Mode == abi.InputURL && caps.URL == nil:
			return errors.New("it declared no url elicitation capability")
		case q.Mode == abi.InputForm && caps.Form == nil && caps.URL != nil:
			return errors.New("it declared no form elicitation capability")
		}
	}
	return nil
}

// unanswerable is the envelope for a client that cannot be asked: schema,
// since the call cannot succeed until the caller changes how it calls
// (not retried, not held against the tool).
func unanswerable(tool string, ir *abi.InputRequest, why error) *dispatcher.DispatchError {
	msgs := make([]string, 0, len(ir.Requests))
	for _, id := range slices.Sorted(maps.Keys(ir.Requests)) {
		msgs = append(msgs, jsonString(ir.Requests[id].Message))
	}
	return refusal(dispatcher.KindSchema,
		"tool %s needs input from the user (%s), but this client cannot be asked: %v; call it from a client that supports MCP elicitation (input_required at 2026-07-28, elicitation/create at 2025-11-25)",
		tool, strings.Join(msgs, ", "), why)
}

// markInputRequired gives res the resultType "input_required"; as in
// markComplete, the field is unexported and decoding is the one public
// way to set it.
func markInputRequired(res *mcp.CallToolResult) {
	saved := *res
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"input_required"}`), res); err != nil {
		*res = saved
		return
	}
	res.Meta, res.InputRequests, res.RequestState = saved.Meta, saved.InputRequests, saved.RequestState
}
