// Command jsontools is a toolhost tool module for reading and changing JSON
// documents: RFC 6901 pointers, RFC 7386 merge patches and a small jq-like
// path language. Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/jsontools.wasm ./tools-src/jsontools
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

func init() {
	// Pure functions that answer in milliseconds; 5 s only stops a
	// pathological input early.
	// Pure functions keep nothing between calls: a caller's calls may
	// share a warm instance (docs/ABI.md, "Warm instances").
	pure := guest.Options{Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse}

	pure.Title = "Get a value by JSON Pointer"
	pure.Description = `Returns the value a JSON Pointer (RFC 6901) names inside a JSON document. ` +
		`The pointer is "" for the whole document or a sequence of "/token" steps: an object member ` +
		`name or a zero-based array index, with "~1" standing for "/" and "~0" for "~" inside a ` +
		`token (so "/a~1b/0" is element 0 of member "a/b"). A step that does not exist is an ` +
		`error naming the token and what was there instead.`
	guest.Register("json.get", pure, get)

	pure.Title = "Apply a JSON merge patch"
	pure.Description = `Applies a JSON Merge Patch (RFC 7386) to a document and returns the result. ` +
		`Members of an object patch replace the document's members recursively, a null member ` +
		`deletes that member, and a patch that is not an object replaces the whole document. ` +
		`Arrays are replaced, never merged. Object keys come back sorted.`
	guest.Register("json.merge", pure, merge)

	pure.Title = "Select values with a jq-like path"
	pure.Description = selectDescription
	guest.Register("json.select", pure, selectPath)
}

func main() {}

// decodeDoc keeps numbers as json.Number so that large integers and exact
// decimals come back as they were sent, not rounded through float64.
func decodeDoc(field string, raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, guest.Schemaf("%s is required", field)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, guest.Schemaf("%s: %v", field, err)
	}
	return v, nil
}

type getArgs struct {
	Doc     json.RawMessage `json:"doc" jsonschema:"description=the JSON document (any JSON value)"`
	Pointer string          `json:"pointer" jsonschema:"description=RFC 6901 JSON Pointer such as /items/0/name; empty for the whole document"`
}

type valueResult struct {
	Value any `json:"value"`
}

func get(a getArgs) (valueResult, error) {
	doc, err := decodeDoc("doc", a.Doc)
	if err != nil {
		return valueResult{}, err
	}
	if a.Pointer == "" {
		return valueResult{Value: doc}, nil
	}
	if a.Pointer[0] != '/' {
		return valueResult{}, guest.Schemaf(`pointer must be "" or start with "/", got %q`, a.Pointer)
	}
	tokens := strings.Split(a.Pointer[1:], "/")
	cur := doc
	for i, raw := range tokens {
		fail := func(format string, args ...any) error {
			at := "/" + strings.Join(tokens[:i], "/")
			if i == 0 {
				at = "the document root"
			}
			return guest.Schemaf("pointer %q: token %d (%q) failed at %s: %s",
				a.Pointer, i+1, raw, at, fmt.Sprintf(format, args...))
		}
		tok, ok := unescapeToken(raw)
		if !ok {
			return valueResult{}, fail(`"~" must be followed by 0 or 1`)
		}
		switch v := cur.(type) {
		case map[string]any:
			next, found := v[tok]
			if !found {
				return valueResult{}, fail("object has no member %q (members: %s)", tok, memberList(v))
			}
			cur = next
		case []any:
			idx, err := arrayIndex(tok, len(v))
			if err != nil {
				return valueResult{}, fail("%v", err)
			}
			cur = v[idx]
		default:
			return valueResult{}, fail("%s has no members or elements", typeName(cur))
		}
	}
	return valueResult{Value: cur}, nil
}

func unescapeToken(tok string) (string, bool) {
	if !strings.Contains(tok, "~") {
		return tok, true
	}
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '~' {
			b.WriteByte(tok[i])
			continue
		}
		if i+1 == len(tok) || (tok[i+1] != '0' && tok[i+1] != '1') {
			return "", false
		}
		b.WriteByte("~/"[tok[i+1]-'0'])
		i++
	}
	return b.String(), true
}

// arrayIndex applies RFC 6901's strict index syntax: no signs, no leading
// zeros, and "-" (the element after the last) never exists for a read.
func arrayIndex(tok string, n int) (int, error) {
	if tok == "-" {
		return 0, fmt.Errorf(`"-" names the element after the last one, which a read cannot use (array has %d elements)`, n)
	}
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || strings.Trim(tok, "0123456789") != "" {
		return 0, fmt.Errorf("array index must be a non-negative integer without leading zeros")
	}
	idx, err := strconv.Atoi(tok)
	if err != nil || idx >= n {
		return 0, fmt.Errorf("index %s is out of range (array has %d elements)", tok, n)
	}
	return idx, nil
}

// memberList names up to ten members so a caller can correct a typo without
// another round trip, and stays short on huge objects.
func memberList(m map[string]any) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, strconv.Quote(k))
	}
	slices.Sort(keys)
	if len(keys) > 10 {
		return strings.Join(keys[:10], ", ") + fmt.Sprintf(" and %d more", len(keys)-10)
	}
	return strings.Join(keys, ", ")
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

type mergeArgs struct {
	Doc   json.RawMessage `json:"doc" jsonschema:"description=the JSON document to patch (any JSON value)"`
	Patch json.RawMessage `json:"patch" jsonschema:"description=the RFC 7386 merge patch; null members delete"`
}

type docResult struct {
	Doc any `json:"doc"`
}

func merge(a mergeArgs) (docResult, error) {
	doc, err := decodeDoc("doc", a.Doc)
	if err != nil {
		return docResult{}, err
	}
	patch, err := decodeDoc("patch", a.Patch)
	if err != nil {
		return docResult{}, err
	}
	return docResult{Doc: mergePatch(doc, patch)}, nil
}

// mergePatch is RFC 7386 section 2 verbatim. It changes target in place,
// which is safe because every document here is freshly decoded.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
		} else {
			t[k] = mergePatch(t[k], v)
		}
	}
	return t
}
