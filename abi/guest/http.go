package guest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// HTTP from a tool goes through the host's governed egress (the
// toolhost_v1 import module): the request reaches only the hosts, methods
// and sizes the operator granted this module, may wait for the rate
// governor, and carries headers (API keys) the host injects and the tool
// never sees. Client mirrors the shape of net/http's, without importing
// it (net/http would add megabytes and start-up time to every instance).
//
//	resp, err := guest.Get("https://api.example.com/v1/items")
//	if err != nil {
//		return nil, err // a 429 or 503 is a transient error with retry_after_ms
//	}
//
// Errors: a 429 or 503 answer returns the Response and a transient *Error
// carrying the upstream's Retry-After, so that returning it from a tool
// makes the dispatcher retry no sooner than asked. A refused or failed
// request returns an *Error wrapping an *HTTPError (errors.As reads its
// Kind and Grant): transient for rate_limited, timeout and unavailable,
// internal for denied, too_large and invalid.

// Header is a set of HTTP headers, keyed by canonical name
// ("Content-Type").
type Header map[string][]string

// Get returns the first value of name, or "".
func (h Header) Get(name string) string {
	if v := h[canonicalKey(name)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces name's values with value.
func (h Header) Set(name, value string) { h[canonicalKey(name)] = []string{value} }

// Add appends value to name's values.
func (h Header) Add(name, value string) {
	k := canonicalKey(name)
	h[k] = append(h[k], value)
}

// Del removes name.
func (h Header) Del(name string) { delete(h, canonicalKey(name)) }

// canonicalKey upper-cases the first letter and each letter after a '-',
// lower-cases the rest, as net/textproto does.
func canonicalKey(s string) string {
	b := []byte(s)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !upper && 'A' <= c && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// Request is an outbound HTTP request.
type Request struct {
	// Method is the HTTP method; empty means GET.
	Method string
	// URL is an absolute http or https URL.
	URL    string
	Header Header
	Body   []byte
}

// NewRequest returns a request with an empty Header.
func NewRequest(method, url string, body []byte) *Request {
	return &Request{Method: method, URL: url, Header: Header{}, Body: body}
}

// Response is an upstream's answer.
type Response struct {
	StatusCode int
	Header     Header
	Body       []byte
	// URL is the URL that answered, after any redirects (empty from a
	// host that does not say).
	URL string
	// RetryAfter is the upstream's Retry-After, when it sent one.
	RetryAfter time.Duration
}

// HTTPError is a request that got no answer: the host refused it or it
// failed. Kind is one of abi's Egress* kinds; Grant, for denied and
// too_large, names the grant that is missing or exceeded.
type HTTPError struct {
	Kind       abi.EgressErrorKind
	Grant      string
	Message    string
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	if e.Grant != "" {
		return fmt.Sprintf("egress %s (grant %s): %s", e.Kind, e.Grant, e.Message)
	}
	return fmt.Sprintf("egress %s: %s", e.Kind, e.Message)
}

// StatusError is an answer a tool usually cannot use as is: Do returns it,
// wrapped in a transient *Error, for 429 and 503.
type StatusError struct {
	StatusCode int
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("upstream answered %d; retry after %v", e.StatusCode, e.RetryAfter)
	}
	return fmt.Sprintf("upstream answered %d", e.StatusCode)
}

// Client sends requests through the host. The zero value is usable; a
// Client is safe to share between goroutines.
type Client struct {
	// Header is sent with every request unless the request sets the same
	// name (a User-Agent, an Accept).
	Header Header
}

// DefaultClient is the Client used by Get and Post.
var DefaultClient = &Client{}

// Get sends a GET with DefaultClient.
func Get(url string) (*Response, error) { return DefaultClient.Get(url) }

// Post sends a POST with DefaultClient.
func Post(url, contentType string, body []byte) (*Response, error) {
	return DefaultClient.Post(url, contentType, body)
}

// Get sends a GET.
func (c *Client) Get(url string) (*Response, error) {
	return c.Do(NewRequest("GET", url, nil))
}

// Post sends a POST with the given Content-Type.
func (c *Client) Post(url, contentType string, body []byte) (*Response, error) {
	req := NewRequest("POST", url, body)
	req.Header.Set("Content-Type", contentType)
	return c.Do(req)
}

// roundTrip is the host call: the request JSON in, the result JSON out.
// Tests replace it.
var roundTrip = hostRoundTrip

// egressMu keeps one request in flight per instance: the host holds one
// result at a time.
var egressMu sync.Mutex

// Do sends req and returns the answer. See the package documentation for
// its errors.
func (c *Client) Do(req *Request) (*Response, error) {
	wire := abi.HTTPRequest{Method: req.Method, URL: req.URL, Headers: map[string][]string{}}
	for k, v := range c.Header {
		wire.Headers[k] = v
	}
	for k, v := range req.Header {
		wire.Headers[k] = v
	}
	if len(req.Body) > 0 {
		wire.BodyBase64 = base64.StdEncoding.EncodeToString(req.Body)
	}
	in, err := json.Marshal(wire)
	if err != nil {
		return nil, fmt.Errorf("egress: encoding the request: %w", err)
	}
	egressMu.Lock()
	out, err := roundTrip(in)
	egressMu.Unlock()
	if err != nil {
		return nil, err
	}
	var r abi.HTTPResponse
	if err := json.Unmarshal(out, &r); err != nil {
		return nil, fmt.Errorf("egress: the host's answer is not JSON: %w", err)
	}
	if r.Error != nil {
		return nil, fromEgressError(r.Error)
	}
	resp := &Response{StatusCode: r.Status, Header: Header(r.Headers), Body: []byte(r.Body), URL: r.URL,
		RetryAfter: time.Duration(r.RetryAfterMS) * time.Millisecond}
	if resp.Header == nil {
		resp.Header = Header{}
	}
	if r.BodyBase64 != "" {
		if resp.Body, err = base64.StdEncoding.DecodeString(r.BodyBase64); err != nil {
			return nil, fmt.Errorf("egress: the host's body_base64: %w", err)
		}
	}
	if r.Status == 429 || r.Status == 503 {
		return resp, TransientAfter(&StatusError{StatusCode: r.Status, RetryAfter: resp.RetryAfter}, resp.RetryAfter)
	}
	return resp, nil
}

func fromEgressError(e *abi.EgressError) error {
	he := &HTTPError{Kind: e.Kind, Grant: e.Grant, Message: e.Message, RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond}
	switch e.Kind {
	case abi.EgressRateLimited, abi.EgressTimeout, abi.EgressUnavailable:
		return &Error{Kind: abi.KindTransient, RetryAfter: he.RetryAfter, Err: he}
	}
	return &Error{Kind: abi.KindInternal, Err: he}
}

// errNoEgress is returned outside WebAssembly, where there is no host.
var errNoEgress = errors.New("egress: no toolhost host here (HTTP from a tool works only inside toolhost)")
