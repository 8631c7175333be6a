package transport

import (
	"bytes"
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
)

// The SDK decodes a JSON-RPC id through float64: 9007199254740993 comes
// back as …992, 1e300 as -9223372036854775808, 1.5 as 1. Two requests could
// then share an id, and a client would match an answer to the wrong call.
// So the HTTP front checks every id before the SDK sees it:
//
//   - a string, or an integer literal within ±2^53, passes untouched;
//   - an integer literal within int64 but beyond ±2^53 (or -0) is handed to the SDK
//     as the string bigIDPrefix+digits, and the answer's id is turned back
//     into the digits as sent (notifications/cancelled naming it likewise);
//   - anything else (a fraction, an exponent, beyond int64, an object, an
//     array, a bool) is refused with -32600 and id null: it cannot be
//     echoed exactly.
//
// A string id that starts with bigIDPrefix is refused too, so a surrogate
// can never meet a client's own id.
const bigIDPrefix = "toolhost-int-id:"

// maxExactFloat is 2^53: every integer up to it survives float64.
const maxExactFloat = 1 << 53

// idVerdict says what to do with one id.
type idVerdict int

const (
	idKeep    idVerdict = iota // pass as sent
	idRewrite                  // pass as bigIDPrefix+digits
	idRefuse                   // answer -32600
)

// classifyID classifies a raw JSON id (present and not null).
func classifyID(raw json.RawMessage) (idVerdict, string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return idRefuse, "the id is empty"
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return idRefuse, "the id is not a valid string"
		}
		if strings.HasPrefix(s, bigIDPrefix) {
			return idRefuse, "string ids starting with " + bigIDPrefix + " are reserved by this server"
		}
		return idKeep, ""
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if bytes.ContainsAny(raw, ".eE") {
			return idRefuse, "a numeric id must be an integer written without fraction or exponent, so that it can be echoed exactly"
		}
		n, ok := new(big.Int).SetString(string(raw), 10)
		if !ok {
			return idRefuse, "the id is not a valid number"
		}
		if !n.IsInt64() {
			return idRefuse, "a numeric id must fit in a signed 64-bit integer, so that it can be echoed exactly"
		}
		// Beyond 2^53 float64 loses digits; -0 comes back as 0.
		if v := n.Int64(); v > maxExactFloat || v < -maxExactFloat || n.String() != string(raw) {
			return idRewrite, ""
		}
		return idKeep, ""
	}
	return idRefuse, "the id must be a string or an integer"
}

// surrogate is the string id the SDK sees for a big integer id.
func surrogate(digits json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(bigIDPrefix + string(bytes.TrimSpace(digits)))
	return b
}

// idRestorer turns surrogate ids in the answer back into the integers the
// client sent. The SDK writes each message (an SSE event or a JSON body)
// in one Write, so a surrogate never spans two.
type idRestorer struct {
	http.ResponseWriter
	from, to []byte
}

func newIDRestorer(w http.ResponseWriter, digits json.RawMessage) *idRestorer {
	return &idRestorer{
		ResponseWriter: w,
		from:           append([]byte(`"id":`), surrogate(digits)...),
		to:             append([]byte(`"id":`), bytes.TrimSpace(digits)...),
	}
}

func (w *idRestorer) Write(p []byte) (int, error) {
	if !bytes.Contains(p, w.from) {
		return w.ResponseWriter.Write(p)
	}
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, w.from, w.to)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush keeps SSE answers streaming through the wrapper.
func (w *idRestorer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *idRestorer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// rewriteCancelled names a big integer request in notifications/cancelled
// by the surrogate the SDK knows it by. It returns the body to send on.
func rewriteCancelled(fields map[string]json.RawMessage, body []byte) []byte {
	var params map[string]json.RawMessage
	if json.Unmarshal(fields["params"], &params) != nil || params["requestId"] == nil {
		return body
	}
	if v, _ := classifyID(params["requestId"]); v != idRewrite {
		return body
	}
	params["requestId"] = surrogate(params["requestId"])
	p, err := json.Marshal(params)
	if err != nil {
		return body
	}
	fields["params"] = p
	if b, err := json.Marshal(fields); err == nil {
		return b
	}
	return body
}
