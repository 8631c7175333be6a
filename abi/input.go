package abi

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Input requests: a tool that needs the user's answer before it can go on
// (a confirmation, a missing value, a sign-in in the browser) responds with
// {"input": InputRequest} instead of a result or an error. The host asks
// the caller's client (MCP elicitation) and calls the tool again with the
// same arguments; during that call the tool reads the answers, and the
// state it chose to keep, through the toolhost_v1 input import:
//
//	n := input(0, 0)        // the InputResume JSON's length; 0: not a resumed call
//	buf := <n bytes of guest memory>
//	input(buf_ptr, n)       // copies it in; returns n
//
// Optional in ABI version 1: a module that never answers "input" never
// imports the function.
const (
	// ImportInput is `(buf_ptr i32, buf_len i32) -> i32`: copies up to
	// buf_len bytes of the call's InputResume JSON to buf_ptr and returns
	// its whole length; 0 when the call is not the answer to an input
	// request, -1 when the buffer is outside guest memory.
	ImportInput = "input"
)

// Bounds of an input request: what the host relays to a client and keeps
// (signed) in the client's hands between the two calls.
const (
	// MaxInputRequests is the most requests one response may make.
	MaxInputRequests = 4
	// MaxInputMessageBytes bounds each request's message.
	MaxInputMessageBytes = 2048
	// MaxInputStateBytes bounds the state a tool keeps across the exchange.
	MaxInputStateBytes = 4096
	// MaxInputSchemaBytes bounds each form's schema.
	MaxInputSchemaBytes = 8192
	// MaxInputIDLen bounds a request's id (the same characters as a tool
	// name).
	MaxInputIDLen = 64
)

// The modes of an input request (MCP elicitation modes).
const (
	// InputForm asks the user to fill in a flat form: Schema is a JSON
	// Schema object whose properties are primitives (string, number,
	// integer, boolean, or an array of enumerated strings).
	InputForm = "form"
	// InputURL asks the user to open URL (a sign-in, a payment) and come
	// back; the answer carries no content.
	InputURL = "url"
)

// InputRequest is what a tool responds with when it needs input: one or
// more requests by id, and an opaque state of its own that comes back with
// the answers.
type InputRequest struct {
	// Requests maps an id of the tool's choosing to one request.
	Requests map[string]InputQuestion `json:"requests"`
	// State is kept for the tool (signed by the host, so the client can
	// neither read it as something else's nor forge it) and handed back
	// with the answers. At most MaxInputStateBytes.
	State string `json:"state,omitempty"`
}

// Error lets an InputRequest travel where a tool's error would: host and
// dispatcher pass it up as the call's answer, never as a failure.
func (r *InputRequest) Error() string {
	return "the tool needs input from the user"
}

// InputQuestion is one request for input.
type InputQuestion struct {
	// Mode is InputForm or InputURL.
	Mode string `json:"mode"`
	// Message is what the user is shown.
	Message string `json:"message"`
	// Schema is the form's JSON Schema (InputForm only).
	Schema json.RawMessage `json:"schema,omitempty"`
	// URL is the page to open (InputURL only): absolute http or https.
	URL string `json:"url,omitempty"`
}

// InputResume is the document the toolhost_v1 input import hands a
// resumed call: the tool's own state and the user's answers, by the ids
// of its requests.
type InputResume struct {
	// State is the InputRequest's State, verified by the host.
	State string `json:"state,omitempty"`
	// Responses has one answer for every request id asked.
	Responses map[string]InputAnswer `json:"responses"`
}

// InputAnswer is the user's answer to one request.
type InputAnswer struct {
	// Action is InputAccept, InputDecline or InputCancel.
	Action string `json:"action"`
	// Content is the form's values when the user accepted a form.
	Content map[string]any `json:"content,omitempty"`
}

// The actions of an answer (MCP elicitation actions).
const (
	InputAccept  = "accept"
	InputDecline = "decline"
	InputCancel  = "cancel"
)

// CheckInput checks an input request against the bounds and modes above.
func CheckInput(r *InputRequest) error {
	if len(r.Requests) == 0 {
		return contractErrorf("response", "input has no requests")
	}
	if len(r.Requests) > MaxInputRequests {
		return contractErrorf("response", "input has %d requests, more than %d", len(r.Requests), MaxInputRequests)
	}
	if len(r.State) > MaxInputStateBytes {
		return contractErrorf("response", "input state is %d bytes, more than %d", len(r.State), MaxInputStateBytes)
	}
	for id, q := range r.Requests {
		if len(id) > MaxInputIDLen || !ValidToolName(id) {
			return contractErrorf("response", "input request id %q does not match ^[A-Za-z0-9_.-]{1,%d}$", id, MaxInputIDLen)
		}
		if err := checkQuestion(id, q); err != nil {
			return err
		}
	}
	return nil
}

func checkQuestion(id string, q InputQuestion) error {
	if q.Message == "" || len(q.Message) > MaxInputMessageBytes {
		return contractErrorf("response", "input request %q: message must be 1 to %d bytes", id, MaxInputMessageBytes)
	}
	switch q.Mode {
	case InputForm:
		if q.URL != "" {
			return contractErrorf("response", "input request %q: a form has no url", id)
		}
		return checkForm(id, q.Schema)
	case InputURL:
		if len(q.Schema) > 0 {
			return contractErrorf("response", "input request %q: a url request has no schema", id)
		}
		if !absoluteHTTP(q.URL) {
			return contractErrorf("response", "input request %q: url %q is not an absolute http or https URL", id, q.URL)
		}
		return nil
	}
	return contractErrorf("response", "input request %q: mode %q is not %q or %q", id, q.Mode, InputForm, InputURL)
}

// absoluteHTTP reports whether u is an absolute http or https URL with a
// host, and no white space or control characters. It does not use
// net/url: this package is linked into every Go guest, and net/url would
// run net/netip's init in every fresh instance (host's
// TestSDKInitsAsMinimal).
func absoluteHTTP(u string) bool {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(u, "http://"); !ok {
			return false
		}
	}
	for i := 0; i < len(u); i++ {
		if u[i] <= ' ' || u[i] == 0x7f {
			return false
		}
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	return host != "" && host[0] != ':'
}

// primitive reports whether t is a property type an MCP elicitation form
// allows.
func primitive(t string) bool {
	switch t {
	case "string", "number", "integer", "boolean", "array":
		return true
	}
	return false
}

// checkForm accepts what MCP elicitation allows: an object schema whose
// properties are primitives, nothing nested.
func checkForm(id string, schema json.RawMessage) error {
	if len(schema) > MaxInputSchemaBytes {
		return contractErrorf("response", "input request %q: schema is %d bytes, more than %d", id, len(schema), MaxInputSchemaBytes)
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
		return contractErrorf("response", `input request %q: schema must be a JSON Schema object with "type": "object"`, id)
	}
	for name, raw := range s.Properties {
		var p struct {
			Type  string `json:"type"`
			Items *struct {
				Type string `json:"type"`
			} `json:"items"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || !primitive(p.Type) {
			return contractErrorf("response", "input request %q: property %q must be a string, number, integer, boolean or array of enumerated strings", id, name)
		}
		if p.Type == "array" && (p.Items == nil || p.Items.Type != "string") {
			return contractErrorf("response", "input request %q: array property %q must have string items (a multi-select)", id, name)
		}
	}
	return nil
}

// parseInput decodes and checks the "input" member of a response.
func parseInput(raw json.RawMessage) (Response, error) {
	var r InputRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&r); err != nil {
		return Response{}, contractErrorf("response", "input is not an object with requests: %v", err)
	}
	if !utf8.ValidString(r.State) {
		return Response{}, contractErrorf("response", "input state is not valid UTF-8")
	}
	if err := CheckInput(&r); err != nil {
		return Response{}, err
	}
	return Response{Input: &r}, nil
}
