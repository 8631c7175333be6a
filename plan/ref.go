package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// A reference is an object whose only member is "$ref", a string of the
// form /steps/{id}/result followed by an RFC 6901 JSON Pointer into that
// step's result. Any other object (one with more members, say) is a plain
// value.
const refKey = "$ref"

type ref struct {
	step   int
	tokens []string // unescaped pointer tokens after /result
	text   string
}

// parseRef reads a reference string.
func parseRef(s string) (ref, error) {
	rest, ok := strings.CutPrefix(s, "/steps/")
	if !ok {
		return ref{}, fmt.Errorf(`$ref %q must start with /steps/{id}/result`, s)
	}
	idText, rest, _ := strings.Cut(rest, "/")
	id, ok := parseIndex(idText)
	if !ok || id < 1 || id > MaxStepID {
		return ref{}, fmt.Errorf(`$ref %q: %q is not a step id`, s, idText)
	}
	field, rest, more := strings.Cut(rest, "/")
	if field != "result" {
		return ref{}, fmt.Errorf(`$ref %q: only a step's result can be referenced (/steps/%d/result...)`, s, id)
	}
	r := ref{step: id, text: s}
	if more {
		for _, tok := range strings.Split(rest, "/") {
			t, ok := unescapeToken(tok)
			if !ok {
				return ref{}, fmt.Errorf(`$ref %q: "~" must be followed by 0 or 1`, s)
			}
			r.tokens = append(r.tokens, t)
		}
	}
	return r, nil
}

func unescapeToken(t string) (string, bool) {
	if !strings.Contains(t, "~") {
		return t, true
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 == len(t) || (t[i+1] != '0' && t[i+1] != '1') {
			return "", false
		}
		b.WriteByte("~/"[t[i+1]-'0'])
		i++
	}
	return b.String(), true
}

// parseIndex reads a canonical non-negative decimal: no sign, no leading
// zero, at most 10 digits.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 10 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// lookup follows r's pointer inside doc, a decoded result.
func (r ref) lookup(doc any) (any, error) {
	cur := doc
	for i, tok := range r.tokens {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %s: step %d's result has no member %q at %s", r.text, r.step, tok, at(r.tokens[:i]))
			}
			cur = next
		case []any:
			idx, ok := parseIndex(tok)
			if !ok || idx >= len(v) {
				return nil, fmt.Errorf("$ref %s: step %d's result has no element %q at %s (length %d)", r.text, r.step, tok, at(r.tokens[:i]), len(v))
			}
			cur = v[idx]
		default:
			return nil, fmt.Errorf("$ref %s: step %d's result at %s is a %s, which has no member %q", r.text, r.step, at(r.tokens[:i]), typeName(cur), tok)
		}
	}
	return cur, nil
}

func at(tokens []string) string {
	if len(tokens) == 0 {
		return "the top"
	}
	return pointer(tokens)
}

func pointer(tokens []string) string {
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(esc.Replace(t))
	}
	return b.String()
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// refOf reports whether v is a reference object and returns its string.
// An object whose only member is "$ref" but not a string is an error.
func refOf(v any) (string, bool, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false, nil
	}
	raw, ok := m[refKey]
	if !ok {
		return "", false, nil
	}
	s, ok := raw.(string)
	if !ok {
		return "", false, errors.New(`"$ref" must be a string such as "/steps/1/result"`)
	}
	return s, true, nil
}

// walk visits every reference in v, depth first, in sorted key order so
// that errors are deterministic, and replaces each with what visit returns
// (in place: v is modified). path is the reference's JSON Pointer within
// the arguments.
func walk(v any, path []string, visit func(path []string, r ref) (any, error)) (any, error) {
	s, isRef, err := refOf(v)
	if err != nil {
		return nil, fmt.Errorf("args%s: %w", pointer(path), err)
	}
	if isRef {
		r, err := parseRef(s)
		if err != nil {
			return nil, fmt.Errorf("args%s: %w", pointer(path), err)
		}
		return visit(path, r)
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			nv, err := walk(x[k], append(path, k), visit)
			if err != nil {
				return nil, err
			}
			x[k] = nv
		}
	case []any:
		for i := range x {
			nv, err := walk(x[i], append(path, strconv.Itoa(i)), visit)
			if err != nil {
				return nil, err
			}
			x[i] = nv
		}
	}
	return v, nil
}

// decodeJSON decodes one JSON value, keeping numbers as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// encodeJSON is the canonical encoding: object keys sorted, numbers as
// written, no HTML escaping, no white space.
func encodeJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only decoded JSON values reach here; they always encode.
		panic(fmt.Sprintf("plan: encoding a decoded JSON value: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// canonical re-encodes a JSON document canonically.
func canonical(b json.RawMessage) (json.RawMessage, error) {
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return encodeJSON(v), nil
}

// compact strips insignificant white space and keeps everything else as
// written (results are kept as the tool wrote them, minus the spacing).
func compact(b json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// argsHash is the hex SHA-256 of canonical arguments.
func argsHash(canonicalArgs json.RawMessage) string {
	sum := sha256.Sum256(canonicalArgs)
	return hex.EncodeToString(sum[:])
}

// Key is the idempotency key the executor gives a step:
// {session_id}:{step_id}:{tool_name}:{hash}, where hash is the first 32
// hex digits of the SHA-256 of the canonical arguments (keys sorted,
// numbers as written). The session id keeps two runs of one plan apart; a
// step dispatched again while its first dispatch is in flight shares that
// execution. The key is at most 64+1+10+1+128+1+32 = 237 bytes, within the
// dispatcher's 255.
func Key(sessionID string, stepID int, tool string, canonicalArgs json.RawMessage) string {
	return sessionID + ":" + strconv.Itoa(stepID) + ":" + tool + ":" + argsHash(canonicalArgs)[:32]
}
