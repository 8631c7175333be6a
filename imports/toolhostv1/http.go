package toolhostv1

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// httpRequest is toolhost_v1.http_request(req_ptr, req_len i32) -> i32.
//
//	guest memory: [req_ptr, req_ptr+req_len)  the HTTPRequest JSON (read)
//	result:       the length of the HTTPResponse JSON now held for
//	              http_response; -1 when the range is outside memory.
//
// It never traps: every failure is an HTTPResponse with an error.
func httpRequest(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	call := callFrom(ctx)
	if call == nil {
		stack[0] = api.EncodeI32(-1)
		return
	}
	if call.loading {
		stack[0] = api.EncodeI32(int32(len(hold(call, nil, &abi.EgressError{Kind: abi.EgressDenied, Grant: "module",
			Message: "egress is not available while the module is being loaded (in _initialize or toolhost_describe), only during a tool call"}))))
		return
	}
	if call.grant != nil && int64(n) > 6*call.grant.maxReq+64<<10 {
		stack[0] = api.EncodeI32(int32(len(hold(call, nil, call.grant.denied("max_request_bytes",
			"the request document is %d bytes, far over the %d-byte request body limit", n, call.grant.maxReq)))))
		return
	}
	raw, ok := mod.Memory().Read(ptr, n)
	if !ok {
		call.pending = nil
		stack[0] = api.EncodeI32(-1)
		return
	}
	resp, eerr := call.traced(ctx, raw)
	stack[0] = api.EncodeI32(int32(len(hold(call, resp, eerr))))
}

// httpResponse is toolhost_v1.http_response(buf_ptr, buf_len i32) -> i32.
//
//	guest memory: [buf_ptr, buf_ptr+min(buf_len, held))  the held result JSON (written)
//	result:       bytes written; -1 when nothing is held or the range is
//	              outside memory.
func httpResponse(ctx context.Context, mod api.Module, stack []uint64) {
	ptr, n := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	call := callFrom(ctx)
	if call == nil || call.pending == nil {
		stack[0] = api.EncodeI32(-1)
		return
	}
	b := call.pending[:min(int(n), len(call.pending))]
	if !mod.Memory().Write(ptr, b) {
		stack[0] = api.EncodeI32(-1)
		return
	}
	stack[0] = api.EncodeI32(int32(len(b)))
}

// hold encodes the result and keeps it for http_response.
func hold(call *Call, resp *abi.HTTPResponse, eerr *abi.EgressError) []byte {
	if eerr != nil {
		resp = &abi.HTTPResponse{Error: eerr}
		if call.refused == nil && refusal(eerr) {
			call.refused = eerr
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(abi.HTTPResponse{Error: &abi.EgressError{Kind: abi.EgressInvalid, Message: "encoding the response: " + err.Error()}})
	}
	call.pending = b
	return b
}

// do performs one request for the call's module, as far as its grant
// allows.
func (c *Call) do(ctx context.Context, raw []byte) (*abi.HTTPResponse, *abi.EgressError) {
	g := c.grant
	if g == nil {
		return nil, &abi.EgressError{Kind: abi.EgressDenied, Grant: "module", Message: fmt.Sprintf(
			"module %s has no egress grant: the operator grants it network access with a [grants.%q] section in the config file",
			c.module, c.module)}
	}
	var r abi.HTTPRequest
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, invalid("the request is not an HTTPRequest JSON object: %v", err)
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return nil, invalid("method %q is not an HTTP method name", r.Method)
	}
	u, err := url.Parse(r.URL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, invalid("url %q is not an absolute http(s) URL", r.URL)
	}
	if u.User != nil {
		return nil, invalid("url %q carries a user name or password; credentials are injected by the host's grant, not sent by tools", u.Redacted())
	}
	if eerr := g.allow(method, u); eerr != nil {
		return nil, eerr
	}
	describe(ctx, method, u)
	body := []byte(r.Body)
	if r.BodyBase64 != "" {
		if r.Body != "" {
			return nil, invalid("set body or body_base64, not both")
		}
		if body, err = base64.StdEncoding.DecodeString(r.BodyBase64); err != nil {
			return nil, invalid("body_base64: %v", err)
		}
	}
	if int64(len(body)) > g.maxReq {
		return nil, g.denied("max_request_bytes", "the request body is %d bytes, over the %d bytes module %s may send", len(body), g.maxReq, g.module)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, invalid("%v", err)
	}
	for name, vs := range r.Headers {
		if forbiddenHeader(name) || !validToken(name) {
			return nil, invalid("header %q cannot be set by a tool", name)
		}
		req.Header[http.CanonicalHeaderKey(name)] = slices.Clone(vs)
	}
	inject(ctx, req.Header)
	if eerr := g.acquire(ctx, u); eerr != nil {
		return nil, eerr
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, c.upstreamFailure(g.failure(ctx, u, err), hop(err, u))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, g.maxResp+1))
	if err != nil {
		return nil, c.upstreamFailure(g.failure(ctx, resp.Request.URL, err), resp.Request.URL)
	}
	if resp.StatusCode >= 500 {
		c.upstreamFailed(resp.Request.URL, fmt.Sprintf("answered %d", resp.StatusCode))
	}
	if int64(len(b)) > g.maxResp {
		return nil, &abi.EgressError{Kind: abi.EgressTooLarge, Grant: "max_response_bytes", Message: fmt.Sprintf(
			"the response body from %s is over the %d bytes module %s may receive", resp.Request.URL.Host, g.maxResp, g.module)}
	}
	out := &abi.HTTPResponse{Status: resp.StatusCode, Headers: resp.Header, URL: resp.Request.URL.String()}
	if utf8.Valid(b) {
		out.Body = string(b)
	} else {
		out.BodyBase64 = base64.StdEncoding.EncodeToString(b)
	}
	if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		out.RetryAfterMS = max(ra.Milliseconds(), 1)
	}
	if (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) && g.gov != nil {
		fu := resp.Request.URL
		g.gov.ReportHost(ctx, fu.Hostname(), portOf(fu), resp.StatusCode, time.Duration(out.RetryAfterMS)*time.Millisecond)
	}
	return out, nil
}

// upstreamFailure records e against the upstream at u when the upstream,
// not the host, failed the request, and returns e.
func (c *Call) upstreamFailure(e *abi.EgressError, u *url.URL) *abi.EgressError {
	switch e.Kind {
	case abi.EgressUnavailable, abi.EgressTimeout:
		c.upstreamFailed(u, e.Message)
	}
	return e
}

// hop is the URL whose request failed: a redirect hop's, when the client
// says which, else u.
func hop(err error, u *url.URL) *url.URL {
	var ue *url.Error
	if errors.As(err, &ue) {
		if h, perr := url.Parse(ue.URL); perr == nil && h.Host != "" {
			return h
		}
	}
	return u
}

// allow checks a request or redirect hop against the grant's schemes,
// methods and hosts.
func (g *grant) allow(method string, u *url.URL) *abi.EgressError {
	if !slices.Contains(g.schemes, strings.ToLower(u.Scheme)) {
		return g.denied("schemes", "scheme %q is not granted to module %s (schemes: %s)", u.Scheme, g.module, strings.Join(g.schemes, ", "))
	}
	if !slices.Contains(g.methods, method) {
		return g.denied("methods", "method %s is not granted to module %s (methods: %s)", method, g.module, strings.Join(g.methods, ", "))
	}
	host, port := u.Hostname(), portOf(u)
	for _, p := range g.hosts {
		if p.Match(host, port) {
			return nil
		}
	}
	names := make([]string, len(g.hosts))
	for i, p := range g.hosts {
		names[i] = p.String()
	}
	return g.denied("hosts", "host %s is not granted to module %s (hosts: %s)", u.Host, g.module, strings.Join(names, ", "))
}

// acquire asks the governor for one request to u's host.
func (g *grant) acquire(ctx context.Context, u *url.URL) *abi.EgressError {
	if g.gov == nil {
		return nil
	}
	err := g.gov.AcquireHost(ctx, u.Hostname(), portOf(u))
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return contextFailure(ctx, u)
	}
	e := &abi.EgressError{Kind: abi.EgressRateLimited, Message: err.Error()}
	var ra interface{ RetryAfterDuration() time.Duration }
	if errors.As(err, &ra) {
		e.RetryAfterMS = ra.RetryAfterDuration().Milliseconds()
	}
	return e
}

// checkRedirect re-checks every hop against the grant and the governor.
func (g *grant) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return &abi.EgressError{Kind: abi.EgressUnavailable, Message: fmt.Sprintf("stopped after %d redirects", maxRedirects)}
	}
	if eerr := g.allow(req.Method, req.URL); eerr != nil {
		eerr.Message = "redirect from " + via[len(via)-1].URL.Host + ": " + eerr.Message
		return eerr
	}
	if eerr := g.acquire(req.Context(), req.URL); eerr != nil {
		return eerr
	}
	return nil
}

// failure classifies an error from the client or the body.
func (g *grant) failure(ctx context.Context, u *url.URL, err error) *abi.EgressError {
	var eerr *abi.EgressError
	var denied *addressDenied
	switch {
	case errors.As(err, &eerr):
		return eerr
	case errors.As(err, &denied):
		return g.denied("allow_networks", "the request to %s dialled %s; module %s's grant does not allow it (allow_networks)",
			u.Host, denied.Error(), g.module)
	case ctx.Err() != nil:
		return contextFailure(ctx, u)
	}
	return &abi.EgressError{Kind: abi.EgressUnavailable, Message: err.Error()}
}

func contextFailure(ctx context.Context, u *url.URL) *abi.EgressError {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &abi.EgressError{Kind: abi.EgressTimeout, Message: fmt.Sprintf("the call's deadline passed before %s answered", u.Host)}
	}
	return &abi.EgressError{Kind: abi.EgressTimeout, Message: fmt.Sprintf("the call was cancelled before %s answered", u.Host)}
}

func (g *grant) denied(which, format string, args ...any) *abi.EgressError {
	return &abi.EgressError{Kind: abi.EgressDenied, Grant: which, Message: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *abi.EgressError {
	return &abi.EgressError{Kind: abi.EgressInvalid, Message: fmt.Sprintf(format, args...)}
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "http") {
		return "80"
	}
	return "443"
}

// retryAfter parses a Retry-After value: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(min(s, 86400)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
