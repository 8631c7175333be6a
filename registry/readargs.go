package registry

import (
	"bytes"
	"encoding/json"
	"io"
)

// maxDepth is encoding/json's nesting limit: arguments nested deeper are
// not JSON it decodes, and are left to the slow path to refuse.
const maxDepth = 10000

// decodeArgs reads args in one pass: it builds the value the validator
// checks (what jsonschema.UnmarshalJSON would, numbers as json.Number)
// while counting the values (per depth) for the cost estimate and looking
// for keys named twice. It reports ok only for arguments that are one
// JSON value with no key named twice; anything else (not JSON, trailing
// data, a duplicate key, nesting beyond encoding/json's limit) returns
// !ok, and the caller reads args the slow way, which makes the error and
// picks which of several problems to name. One pass instead of two
// (decode, then scan) is half the decoding work and allocations of every
// call.
func (t *Tool) decodeArgs(args []byte) (inst any, work, values int, ok bool) {
	type frame struct {
		obj map[string]any // an object being read; nil for an array
		arr []any          // an array being read
		key string         // object: the member being read
		// keyed: the object's next string token is a value, not a key.
		keyed bool
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var stackBuf [8]frame
	stack := stackBuf[:0]
	var depthBuf [8]int
	perDepth := depthBuf[:0]
	// put places a finished value in the frame it belongs to, or makes it
	// the arguments; it reports whether that was the top-level value.
	put := func(v any) bool {
		if len(stack) == 0 {
			inst = v
			return true
		}
		f := &stack[len(stack)-1]
		if f.obj != nil {
			f.obj[f.key] = v
			f.keyed = false
		} else {
			f.arr = append(f.arr, v)
		}
		return false
	}
	count := func() {
		d := len(stack)
		for len(perDepth) <= d {
			perDepth = append(perDepth, 0)
		}
		perDepth[d]++
		values++
	}
	for done := false; !done; {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, 0, false
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) >= maxDepth {
					return nil, 0, 0, false
				}
				count()
				if v == '{' {
					stack = append(stack, frame{obj: map[string]any{}})
				} else {
					stack = append(stack, frame{arr: []any{}})
				}
			default:
				f := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				var val any = f.arr
				if f.obj != nil {
					val = f.obj
				}
				done = put(val)
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].obj != nil && !stack[n-1].keyed {
				f := &stack[n-1]
				if _, dup := f.obj[v]; dup {
					return nil, 0, 0, false
				}
				f.key, f.keyed = v, true
				continue
			}
		}
		count()
		done = put(tok)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, 0, 0, false // trailing data
	}
	return inst, t.cost.work(perDepth), values, true
}
