package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// precheck reads args (valid JSON) once before validation: it refuses an
// object that names a key twice, and arguments whose validation the
// schema's cost profile says could take more than MaxValidationWork
// subschema applications.
func (t *Tool) precheck(args []byte) error {
	s := scanArgs(args)
	if s.dup {
		return &SchemaError{Tool: t.Name, Path: s.dupAt, Reason: fmt.Sprintf(
			"the key %q appears more than once in this object; parsers disagree on which value counts, so the schema may check one and the tool read another: name each key once", s.dupKey)}
	}
	if w := t.cost.work(s.perDepth); w > MaxValidationWork {
		return t.costError(s.values)
	}
	return nil
}

// costError refuses arguments of values values whose validation could
// take more than MaxValidationWork subschema applications.
func (t *Tool) costError(values int) error {
	return &SchemaError{Tool: t.Name, Reason: fmt.Sprintf(
		"checking these arguments against the tool's input schema could take more than %d subschema applications (%d values); send fewer values",
		MaxValidationWork, values)}
}

// argScan is what one pass over the arguments found.
type argScan struct {
	// perDepth[k] counts the values at depth k (the arguments object is
	// depth 0); values is their sum.
	perDepth []int
	values   int
	// dup: the object at JSON Pointer dupAt names dupKey twice. Such
	// arguments are refused: the schema validator reads one of the values
	// (the last) and a guest's parser may read another (the first), so a
	// value the schema never checked would reach the tool.
	dup           bool
	dupAt, dupKey string
}

// scanArgs reads data (valid JSON) token by token.
func scanArgs(data []byte) argScan {
	type frame struct {
		object bool
		keys   map[string]bool
		index  int    // next array index
		name   string // this value's token in the pointer
		key    bool   // object: the next string token is a key
		member string // object: the member being read
	}
	var s argScan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	// enter counts a value starting within the top frame and names it.
	enter := func() string {
		d := len(stack)
		for len(s.perDepth) <= d {
			s.perDepth = append(s.perDepth, 0)
		}
		s.perDepth[d]++
		s.values++
		if d == 0 {
			return ""
		}
		f := &stack[d-1]
		if f.object {
			f.key = true
			return f.member
		}
		f.index++
		return strconv.Itoa(f.index - 1)
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return s // the end, or not JSON (validation says so)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				name := enter()
				stack = append(stack, frame{object: t == '{', name: name, key: true})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if f := len(stack) - 1; f >= 0 && stack[f].object && stack[f].key {
				top := &stack[f]
				if top.keys == nil {
					top.keys = map[string]bool{}
				}
				if top.keys[t] {
					s.dup, s.dupKey = true, t
					s.dupAt = pointerOf(len(stack), func(i int) string { return stack[i].name })
					return s
				}
				top.keys[t] = true
				top.key, top.member = false, t
				continue
			}
		}
		enter() // a scalar value
	}
}

// pointerOf renders the names of frames 1 to n-1 as a JSON Pointer (frame
// 0 is the arguments object itself).
func pointerOf(n int, name func(int) string) string {
	var sb strings.Builder
	for i := 1; i < n; i++ {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(name(i)))
	}
	return sb.String()
}
