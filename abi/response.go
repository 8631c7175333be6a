package abi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Response is the JSON document toolhost_call returns: exactly one of
// Result, Error and Input is set. Input (the tool needs the user's answer
// first: see InputRequest) is optional in ABI version 1.
type Response struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
	Input  *InputRequest   `json:"input,omitempty"`
}

// Error is the error a guest reports for one call.
type Error struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
	// RetryAfterMS, when > 0, is how long the guest asks the caller to wait
	// before trying again (an upstream Retry-After). Only meaningful for
	// KindTransient.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
}

func (e *Error) Error() string {
	return string(e.Kind) + ": " + e.Message
}

// ParseResponse decodes and checks a response: valid UTF-8, a single JSON
// object with exactly one of "result", "error" and "input" (a "result" of
// null counts as present), an error with a known kind, and an input
// request within CheckInput's bounds. Other top-level keys are ignored.
func ParseResponse(b []byte) (Response, error) {
	if r, ok := parseResult(b); ok {
		return r, nil
	}
	return parseResponse(b)
}

// resultPrefix starts the response nearly every successful call returns.
var resultPrefix = []byte(`{"result":`)

// parseResult accepts a response of the form {"result":V} (V one JSON
// value, JSON white space around it allowed) without decoding it, and
// returns what parseResponse returns for it. Anything else, it leaves to
// parseResponse (false). A warm call of a C tool spent about a sixth of
// its time decoding its response into a map; this costs a scan.
func parseResult(b []byte) (Response, bool) {
	if !bytes.HasPrefix(b, resultPrefix) || len(b) < len(resultPrefix)+2 || b[len(b)-1] != '}' {
		return Response{}, false
	}
	v := trimJSONSpace(b[len(resultPrefix) : len(b)-1])
	if len(v) == 0 || !json.Valid(v) || !utf8.Valid(b) {
		return Response{}, false
	}
	return Response{Result: v}, true
}

// trimJSONSpace trims the four white space bytes of JSON (RFC 8259), and
// nothing else (bytes.TrimSpace also takes, say, U+00A0, which JSON does
// not allow).
func trimJSONSpace(b []byte) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// parseResponse is ParseResponse for any input.
func parseResponse(b []byte) (Response, error) {
	if !utf8.Valid(b) {
		return Response{}, contractErrorf("response", "not valid UTF-8")
	}
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return Response{}, contractErrorf("response", "not a JSON object")
	}
	if !atEOF(dec) {
		return Response{}, contractErrorf("response", "trailing data after the JSON object")
	}
	result, hasResult := fields["result"]
	rawErr, hasError := fields["error"]
	input, hasInput := fields["input"]
	switch {
	case hasResult && hasError:
		return Response{}, contractErrorf("response", `has both "result" and "error"`)
	case hasInput && (hasResult || hasError):
		return Response{}, contractErrorf("response", `has "input" beside "result" or "error"`)
	case hasInput:
		return parseInput(input)
	case hasResult:
		return Response{Result: result}, nil
	case !hasError:
		return Response{}, contractErrorf("response", `has neither "result" nor "error"`)
	}
	var e Error
	if err := json.Unmarshal(rawErr, &e); err != nil {
		return Response{}, contractErrorf("response", "error is not an object with kind and message: %v", err)
	}
	if !e.Kind.Valid() {
		return Response{}, contractErrorf("response", "error kind %q is not transient, schema or internal", e.Kind)
	}
	if e.RetryAfterMS < 0 {
		return Response{}, contractErrorf("response", "retry_after_ms is negative")
	}
	return Response{Error: &e}, nil
}
