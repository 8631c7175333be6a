package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/abi/guest"
)

const selectDescription = `Selects values from a JSON document with a path in a small subset of jq, ` +
	`and returns every selected value in a list. A path is a chain of steps:
  .            the whole document (only on its own)
  .name        object member; name is letters, digits and _ not starting with a digit
  ."any key"   object member with any name, as a JSON string; also ["any key"]
  [N]          array element, zero-based; negative N counts from the end
  [A:B]        array or string slice from A up to but not including B; either bound may be left out
  []           every element of an array, or every value of an object in key order
Examples: .items[].name  .a.b[0]  .[]  .users[-1].email  .rows[0:3]  ."content-type".
As in jq, a missing member or an index out of range selects null, and so does any step on null; ` +
	`a step on the wrong type (a member of an array, [] on a string) is an error. ` +
	`Not supported: pipes, filters, functions, recursive descent (..), optional steps (?).`

type selectArgs struct {
	Doc  json.RawMessage `json:"doc" jsonschema:"description=the JSON document (any JSON value)"`
	Path string          `json:"path" jsonschema:"minLength=1,maxLength=1000,description=jq-like path such as .items[].name"`
}

type selectResult struct {
	Count  int   `json:"count"`
	Values []any `json:"values"`
}

// step is one parsed path step. Exactly one of its shapes is set: a member
// name, an index, a slice, or iterate.
type step struct {
	pos       int // 1-based column in the path, for error messages
	member    *string
	index     *int
	lo, hi    *int
	slice     bool
	iterate   bool
	rendering string
}

func selectPath(a selectArgs) (selectResult, error) {
	doc, err := decodeDoc("doc", a.Doc)
	if err != nil {
		return selectResult{}, err
	}
	path := strings.TrimSpace(a.Path)
	steps, err := parsePath(path)
	if err != nil {
		return selectResult{}, guest.Schemaf("path %q: %v", path, err)
	}
	values := []any{doc}
	for _, s := range steps {
		var next []any
		for _, v := range values {
			out, err := s.apply(v)
			if err != nil {
				return selectResult{}, guest.Schemaf("path %q: step %s at column %d: %v", path, s.rendering, s.pos, err)
			}
			next = append(next, out...)
		}
		values = next
	}
	if values == nil {
		values = []any{}
	}
	return selectResult{Count: len(values), Values: values}, nil
}

func parsePath(p string) ([]step, error) {
	if p == "" || p[0] != '.' {
		return nil, fmt.Errorf("must start with '.'")
	}
	if p == "." {
		return nil, nil
	}
	var steps []step
	for i := 0; i < len(p); {
		start := i
		s := step{pos: i + 1}
		switch {
		case p[i] == '.' && i+1 < len(p) && p[i+1] == '[':
			i++ // ".[0]" and ".a.[0]" mean the same as "[0]" and ".a[0]"
			continue
		case p[i] == '.' && i+1 < len(p) && p[i+1] == '"':
			name, n, err := quoted(p[i+1:])
			if err != nil {
				return nil, fmt.Errorf("column %d: %v", i+2, err)
			}
			s.member, i = &name, i+1+n
		case p[i] == '.' && i+1 < len(p) && isNameStart(p[i+1]):
			j := i + 2
			for j < len(p) && (isNameStart(p[j]) || p[j] >= '0' && p[j] <= '9') {
				j++
			}
			name := p[i+1 : j]
			s.member, i = &name, j
		case p[i] == '.':
			return nil, fmt.Errorf("column %d: '.' must be followed by a name, a quoted key or '['", i+1)
		case p[i] == '[':
			n, err := s.parseBracket(p[i:])
			if err != nil {
				return nil, fmt.Errorf("column %d: %v", i+1, err)
			}
			i += n
		default:
			return nil, fmt.Errorf("column %d: unexpected %q; steps start with '.' or '['", i+1, p[i])
		}
		s.rendering = p[start:i]
		steps = append(steps, s)
	}
	return steps, nil
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// quoted reads a JSON string at the start of s and returns its value and
// length in bytes.
func quoted(s string) (string, int, error) {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			var v string
			if err := json.Unmarshal([]byte(s[:i+1]), &v); err != nil {
				return "", 0, fmt.Errorf("bad quoted key %s: %v", s[:i+1], err)
			}
			return v, i + 1, nil
		}
	}
	return "", 0, fmt.Errorf("unterminated quoted key")
}

// parseBracket parses "[]", "[N]", "[A:B]" or `["key"]` at the start of s
// and returns the bytes it used.
func (s *step) parseBracket(b string) (int, error) {
	end := strings.IndexByte(b, ']')
	if len(b) > 1 && b[1] == '"' {
		name, n, err := quoted(b[1:])
		if err != nil {
			return 0, err
		}
		if 1+n >= len(b) || b[1+n] != ']' {
			return 0, fmt.Errorf("expected ']' after the quoted key")
		}
		s.member = &name
		return n + 2, nil
	}
	if end < 0 {
		return 0, fmt.Errorf("missing ']'")
	}
	inner := b[1:end]
	if inner == "" {
		s.iterate = true
		return end + 1, nil
	}
	num := func(t string) (*int, error) {
		if t == "" {
			return nil, nil
		}
		n, err := strconv.Atoi(t)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", t)
		}
		return &n, nil
	}
	var err error
	if lo, hi, ok := strings.Cut(inner, ":"); ok {
		s.slice = true
		if s.lo, err = num(lo); err == nil {
			s.hi, err = num(hi)
		}
		return end + 1, err
	}
	s.index, err = num(inner)
	return end + 1, err
}

func (s *step) apply(v any) ([]any, error) {
	switch {
	case s.member != nil:
		switch m := v.(type) {
		case nil:
			return []any{nil}, nil
		case map[string]any:
			return []any{m[*s.member]}, nil
		}
		return nil, fmt.Errorf("cannot take member %q of %s", *s.member, typeName(v))
	case s.index != nil:
		switch arr := v.(type) {
		case nil:
			return []any{nil}, nil
		case []any:
			i := *s.index
			if i < 0 {
				i += len(arr)
			}
			if i < 0 || i >= len(arr) {
				return []any{nil}, nil
			}
			return []any{arr[i]}, nil
		}
		return nil, fmt.Errorf("cannot index %s", typeName(v))
	case s.slice:
		switch x := v.(type) {
		case nil:
			return []any{nil}, nil
		case []any:
			lo, hi := bounds(s.lo, s.hi, len(x))
			return []any{slices.Clone(x[lo:hi])}, nil
		case string:
			r := []rune(x)
			lo, hi := bounds(s.lo, s.hi, len(r))
			return []any{string(r[lo:hi])}, nil
		}
		return nil, fmt.Errorf("cannot slice %s", typeName(v))
	}
	switch x := v.(type) {
	case []any:
		return x, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = x[k]
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot iterate over %s", typeName(v))
}

// bounds resolves jq slice bounds: negative counts from the end, and both
// are clamped to the sequence so a slice never fails.
func bounds(lo, hi *int, n int) (int, int) {
	resolve := func(p *int, def int) int {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	l, h := resolve(lo, 0), resolve(hi, n)
	return l, max(l, h)
}
