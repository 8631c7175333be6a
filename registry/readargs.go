package registry

import (
	"bytes"
	"encoding/json"
	"io"
)

// decodeArgs reads args in one pass of encoding/json: it decodes the value
// the validator checks (what jsonschema.UnmarshalJSON returns, numbers as
// json.Number), then counts its values and their cost estimate by
// walking the value, not the text. It reports ok only for arguments that
// are one JSON value with no key named twice; anything else (not JSON,
// trailing data, a duplicate key) returns !ok, and the caller reads args
// the slow way, which makes the error and picks which of several problems
// to name.
//
// Decoding keeps the last of a key's values, so a key named twice shows
// as a member missing from the value: the text's members (countMembers)
// outnumber the value's. One decode instead of a decode and a token scan
// is most of the allocations of a call with arguments: encoding/json's
// Decoder.Token makes and drops a syntax error for every scalar.
func (t *Tool) decodeArgs(args []byte) (inst any, work, values int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&inst); err != nil {
		return nil, 0, 0, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, 0, false // trailing data
	}
	w := argsWalk{cost: t.cost}
	w.walk(inst, 0)
	if w.members != countMembers(args) {
		return nil, 0, 0, false // a key named twice
	}
	return inst, w.work, w.values, true
}

// argsWalk counts the values of decoded arguments and sums what
// validating them could cost: Σ over values of the cost at their depth,
// which is costProfile.work of their counts per depth, without a slice
// of counts to allocate.
type argsWalk struct {
	cost                  costProfile
	work, values, members int
}

// walk counts v, at depth d, and the values within it.
func (w *argsWalk) walk(v any, d int) {
	w.values++
	w.work += w.cost.at(d)
	switch v := v.(type) {
	case map[string]any:
		w.members += len(v)
		for _, x := range v {
			w.walk(x, d+1)
		}
	case []any:
		for _, x := range v {
			w.walk(x, d+1)
		}
	}
}

// countMembers counts the object members of data, which encoding/json has
// just decoded: in valid JSON a colon outside a string separates a
// member's key from its value, and appears nowhere else.
func countMembers(data []byte) int {
	n := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			if c == '\\' {
				escaped = true
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ':':
			n++
		}
	}
	return n
}
