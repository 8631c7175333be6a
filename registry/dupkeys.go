package registry

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// duplicateKey finds the first object in data (valid JSON) that names a
// key twice, and returns the JSON Pointer of that object and the key.
// Such arguments are refused: the schema validator reads one of the
// values (the last) and a guest's parser may read another (the first),
// so a value the schema never checked would reach the tool.
func duplicateKey(data []byte) (ptr, key string, dup bool) {
	// Cheap test first: no object with two keys, no duplicate.
	if bytes.IndexByte(data, ',') < 0 || bytes.IndexByte(data, '{') < 0 {
		return "", "", false
	}
	type frame struct {
		object bool
		keys   map[string]bool
		index  int    // next array index
		name   string // this value's token in the pointer
		key    bool   // object: the next string token is a key
		member string // object: the member being read
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []frame
	// enter names the value about to start within the top frame.
	enter := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := &stack[len(stack)-1]
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
			return "", "", false // the end, or not JSON (validation says so)
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
					return pointerOf(stack, func(i int) string { return stack[i].name }), t, true
				}
				top.keys[t] = true
				top.key, top.member = false, t
				continue
			}
		}
		enter() // a scalar value
	}
}

// pointerOf renders the names of stack[1:] as a JSON Pointer (the first
// frame is the arguments object itself).
func pointerOf[F any](stack []F, name func(int) string) string {
	var sb strings.Builder
	for i := 1; i < len(stack); i++ {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(name(i)))
	}
	return sb.String()
}
