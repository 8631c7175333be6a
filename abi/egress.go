package abi

// Governed egress: the toolhost_v1 import module. A tool module reaches the
// network only through these host functions, and only as far as the
// operator's grant for that module allows (docs/ABI.md, "Governed egress").
//
// One request is two calls, so that the host never has to call back into
// the guest to allocate memory:
//
//	n := http_request(req_ptr, req_len)   // the request JSON; returns the result JSON's length
//	buf := <n bytes of guest memory>
//	http_response(buf_ptr, n)             // copies the result JSON in; returns n
//
// The result is kept by the host until the next http_request or the end of
// the call. The request JSON is an HTTPRequest, the result JSON an
// HTTPResponse: either the upstream's answer or an Error saying why there
// was none.
const (
	// ImportModule is the import module name of the egress host functions.
	ImportModule = "toolhost_v1"
	// ImportHTTPRequest is `(req_ptr i32, req_len i32) -> i32`: performs the
	// request and returns the length in bytes of its result JSON (always
	// more than 0), or -1 when req_ptr and req_len are outside guest memory.
	ImportHTTPRequest = "http_request"
	// ImportHTTPResponse is `(buf_ptr i32, buf_len i32) -> i32`: copies up
	// to buf_len bytes of the last result JSON to buf_ptr and returns how
	// many; -1 when there is no result or the buffer is outside guest
	// memory.
	ImportHTTPResponse = "http_response"
)

// HTTPRequest is the JSON document a guest passes to http_request.
type HTTPRequest struct {
	// Method is the HTTP method; empty means GET.
	Method string `json:"method,omitempty"`
	// URL is an absolute http or https URL.
	URL string `json:"url"`
	// Headers are the request headers. The host sets Host, Content-Length
	// and the hop-by-hop headers itself and refuses them here; headers the
	// operator's grant injects for the URL's host replace any of the same
	// name.
	Headers map[string][]string `json:"headers,omitempty"`
	// Body is a UTF-8 request body; BodyBase64 a binary one (standard
	// base64). At most one may be set.
	Body       string `json:"body,omitempty"`
	BodyBase64 string `json:"body_base64,omitempty"`
}

// HTTPResponse is the JSON document http_response copies out: the
// upstream's answer (Status and the rest), or Error. A 429 or 503 is an
// answer, not an Error: RetryAfterMS then carries its Retry-After, and the
// guest decides (the Go SDK returns a transient error).
type HTTPResponse struct {
	Status  int                 `json:"status,omitempty"`
	Headers map[string][]string `json:"headers,omitempty"`
	// URL is the URL that answered: the request's, or the last redirect
	// hop's. Hosts before this field was added leave it empty.
	URL string `json:"url,omitempty"`
	// Body is the response body when it is valid UTF-8; otherwise it is
	// in BodyBase64 (standard base64) and Body is empty.
	Body       string `json:"body,omitempty"`
	BodyBase64 string `json:"body_base64,omitempty"`
	// RetryAfterMS is the upstream's Retry-After (seconds or an HTTP
	// date) in milliseconds, when it sent one.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	// Error says why there is no answer.
	Error *EgressError `json:"error,omitempty"`
}

// EgressErrorKind classifies an egress failure.
type EgressErrorKind string

// The egress error kinds.
const (
	// EgressDenied: the module's grant does not allow the request. Grant
	// names the missing grant.
	EgressDenied EgressErrorKind = "denied"
	// EgressTooLarge: the response body exceeded the grant's
	// max_response_bytes (Grant says so).
	EgressTooLarge EgressErrorKind = "too_large"
	// EgressRateLimited: the rate governor could not grant the request
	// before the call's deadline; RetryAfterMS estimates when it could.
	EgressRateLimited EgressErrorKind = "rate_limited"
	// EgressTimeout: the call's deadline passed before the answer came.
	EgressTimeout EgressErrorKind = "timeout"
	// EgressUnavailable: the upstream could not be reached (DNS,
	// connection, TLS) or broke off.
	EgressUnavailable EgressErrorKind = "unavailable"
	// EgressInvalid: the request JSON is malformed (bad JSON, method, URL
	// or base64).
	EgressInvalid EgressErrorKind = "invalid"
)

// EgressError is why an HTTP request got no answer.
type EgressError struct {
	Kind EgressErrorKind `json:"kind"`
	// Grant names the grant that is missing or exceeded, as the config
	// file spells it: "module" (no grant at all), "hosts", "methods",
	// "schemes", "max_request_bytes", "max_response_bytes",
	// "allow_networks".
	Grant   string `json:"grant,omitempty"`
	Message string `json:"message"`
	// RetryAfterMS, for rate_limited, estimates when to try again.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

func (e *EgressError) Error() string {
	return "egress " + string(e.Kind) + ": " + e.Message
}
