package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// SchemaError is a tool schema that cannot be served to every MCP client,
// with the place that is wrong.
type SchemaError struct {
	// Pointer is the RFC 6901 JSON Pointer of the offending value inside
	// the schema ("" for the schema itself).
	Pointer string
	// Reason says what is wrong there.
	Reason string
}

func (e *SchemaError) Error() string {
	where := e.Pointer
	if where == "" {
		where = "/"
	}
	return "at " + where + ": " + e.Reason
}

// MaxSchemaDepth is how deeply subschemas may nest in a tool schema. Real
// schemas stay in the tens; the cap keeps a hostile manifest from costing
// the loader unbounded stack.
const MaxSchemaDepth = 256

// Keywords of JSON Schema whose values are subschemas, by the shape of the
// value. Draft 2020-12, plus the earlier drafts' spellings a schema with
// its own $schema may use (definitions, dependencies, additionalItems and
// items as an array). enum, const, default, examples and unknown keywords
// hold data, not schemas, and are kept as they are.
//
// They are switches, not maps: this package is linked into every Go guest,
// where a package-level map is built again by every fresh instance's init.
func isSchemaKeyword(key string) bool {
	switch key {
	case "additionalItems", "additionalProperties", "contains", "contentSchema",
		"else", "if", "items", "not", "propertyNames", "then",
		"unevaluatedItems", "unevaluatedProperties":
		return true
	}
	return false
}

func isSchemaMapKeyword(key string) bool {
	switch key {
	case "$defs", "definitions", "dependencies", "dependentSchemas", "patternProperties", "properties":
		return true
	}
	return false
}

func isSchemaArrayKeyword(key string) bool {
	switch key {
	case "allOf", "anyOf", "oneOf", "prefixItems":
		return true
	}
	return false
}

// NormalizeSchema returns schema with every boolean property schema (a
// value of a "properties" object, at any depth) replaced by its object
// form (true by {}, false by {"not": {}}), which accepts exactly the same
// documents: the TypeScript SDK 1.x refuses a whole tools/list when one
// property schema is not an object. Every other boolean subschema stays as
// written — "additionalProperties": false above all, the literal OpenAI's
// strict mode looks for — and {"not": {}} outside a property takes the
// form false (what earlier normal forms wrote for it). It walks every keyword that holds subschemas, in
// one pass (to check their shape); values of other keywords are kept byte
// for byte, and the whole schema is returned as it came when nothing
// needed changing.
//
// The error is a *SchemaError naming where the schema cannot be served: a
// subschema that is neither an object nor a boolean, a keyword of
// subschemas with a value of the wrong shape, an object with a key given
// twice (clients would disagree on which one counts), or nesting deeper
// than MaxSchemaDepth. The schema itself must be a JSON object; whether it
// is a valid JSON Schema is for a schema compiler.
func NormalizeSchema(schema []byte) ([]byte, error) {
	return walkSchema(schema, false)
}

// CompactSchema goes the other way, and further than NormalizeSchema comes:
// every subschema that is {} or {"not": {}}, wherever it is, takes its
// boolean form. It accepts the same documents;
// validators explain a failed false ("additional properties 'x' not
// allowed") better than a failed not, so a host validates with this form
// and serves the normal one. Errors are as NormalizeSchema's.
func CompactSchema(schema []byte) ([]byte, error) {
	return walkSchema(schema, true)
}

// FirstBooleanPropertySchema returns the JSON Pointer of the first boolean
// property schema in schema, and whether there is one: what a check that
// schemas are served in normal form looks for. It assumes NormalizeSchema
// accepts schema.
func FirstBooleanPropertySchema(schema []byte) (string, bool) {
	n := newNormalizer(schema, false)
	if err := n.root(); err != nil || !n.changed {
		return "", false
	}
	return n.first, true
}

// walkSchema rewrites schema towards the object form or, compact, the
// boolean form; schema itself when nothing changed.
func walkSchema(schema []byte, compact bool) ([]byte, error) {
	n := newNormalizer(schema, compact)
	if err := n.root(); err != nil {
		return nil, err
	}
	if !n.changed {
		return schema, nil
	}
	return n.out.Bytes(), nil
}

func newNormalizer(schema []byte, compact bool) *normalizer {
	n := &normalizer{dec: json.NewDecoder(bytes.NewReader(schema)), compact: compact}
	// Values are copied as written; this keeps Token from failing on a
	// number no float64 holds (1e400) where a subschema belongs, so the
	// error says what is there.
	n.dec.UseNumber()
	return n
}

// normalizer streams one schema from dec to out.
type normalizer struct {
	dec     *json.Decoder
	out     bytes.Buffer
	changed bool
	first   string   // the pointer of the first boolean property schema replaced
	path    []string // where the walk is: reference tokens, unescaped
	depth   int      // schema objects open
	compact bool     // CompactSchema: objects to booleans
}

// pointer renders the current path as a JSON Pointer. Built only for an
// error or the first boolean: a wide schema has thousands of keys.
func (n *normalizer) pointer() string {
	var b strings.Builder
	for _, tok := range n.path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (n *normalizer) fail(format string, args ...any) error {
	return &SchemaError{Pointer: n.pointer(), Reason: fmt.Sprintf(format, args...)}
}

func (n *normalizer) root() error {
	tok, err := n.token()
	if err != nil {
		return err
	}
	if tok != json.Delim('{') {
		return n.fail("a schema must be a JSON object, got %s", tokenKind(tok))
	}
	if err := n.schemaObject(); err != nil {
		return err
	}
	if !atEOF(n.dec) {
		return n.fail("trailing data after the schema")
	}
	return nil
}

func (n *normalizer) token() (json.Token, error) {
	tok, err := n.dec.Token()
	if err != nil {
		return nil, n.fail("not valid JSON: %v", err)
	}
	return tok, nil
}

// schema writes the subschema at the current path whose first token is
// tok; property says it is a property schema, which NormalizeSchema writes
// as an object.
func (n *normalizer) schema(tok json.Token, property bool) error {
	switch tok {
	case true, false:
		if n.compact || !property {
			n.out.WriteString(fmt.Sprint(tok))
			return nil
		}
		if !n.changed {
			n.changed, n.first = true, n.pointer()
		}
		if tok == true {
			n.out.WriteString(`{}`)
		} else {
			n.out.WriteString(`{"not":{}}`)
		}
		return nil
	case json.Delim('{'):
		start := n.out.Len()
		if err := n.schemaObject(); err != nil {
			return err
		}
		if !n.compact && !property && string(n.out.Bytes()[start:]) == `{"not":{}}` {
			// The false an earlier normal form (and the Go SDK before
			// it) wrote as an object, served again as the literal false.
			n.out.Truncate(start)
			n.out.WriteString("false")
			n.changed = true
		}
		if n.compact {
			// Schema objects are written compact, and an inner {} has
			// already become true, so the two forms are recognised by
			// their bytes whatever the input's spacing.
			switch string(n.out.Bytes()[start:]) {
			case `{}`:
				n.out.Truncate(start)
				n.out.WriteString("true")
				n.changed = true
			case `{"not":true}`:
				n.out.Truncate(start)
				n.out.WriteString("false")
				n.changed = true
			}
		}
		return nil
	}
	return n.fail("a subschema must be a JSON object or a boolean, got %s", tokenKind(tok))
}

// schemaObject writes the members of a schema object whose '{' has been
// read.
func (n *normalizer) schemaObject() error {
	if n.depth++; n.depth > MaxSchemaDepth {
		return n.fail("subschemas nest deeper than %d levels", MaxSchemaDepth)
	}
	defer func() { n.depth-- }()
	return n.members(func(key string) error {
		switch {
		case isSchemaKeyword(key):
			tok, err := n.token()
			if err != nil {
				return err
			}
			if key == "items" && tok == json.Delim('[') { // before 2020-12: a tuple
				return n.schemaArray()
			}
			return n.schema(tok, false)
		case isSchemaArrayKeyword(key):
			tok, err := n.token()
			if err != nil {
				return err
			}
			if tok != json.Delim('[') {
				return n.fail("%s must be an array of subschemas, got %s", key, tokenKind(tok))
			}
			return n.schemaArray()
		case isSchemaMapKeyword(key):
			tok, err := n.token()
			if err != nil {
				return err
			}
			if tok != json.Delim('{') {
				return n.fail("%s must be an object of subschemas, got %s", key, tokenKind(tok))
			}
			return n.members(func(string) error {
				tok, err := n.token()
				if err != nil {
					return err
				}
				if key == "dependencies" && tok == json.Delim('[') { // property names, not a schema
					return n.rawArray()
				}
				return n.schema(tok, key == "properties")
			})
		}
		return n.raw()
	})
}

// members writes an object whose '{' has been read, each value through
// each (with the key on the path), refusing a key given twice.
func (n *normalizer) members(each func(key string) error) error {
	var seen map[string]bool
	n.out.WriteByte('{')
	for i := 0; n.dec.More(); i++ {
		tok, err := n.token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		n.path = append(n.path, key)
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[key] {
			return n.fail("key %q appears twice in one object", key)
		}
		seen[key] = true
		if i > 0 {
			n.out.WriteByte(',')
		}
		writeKey(&n.out, key)
		n.out.WriteByte(':')
		if err := each(key); err != nil {
			return err
		}
		n.path = n.path[:len(n.path)-1]
	}
	n.out.WriteByte('}')
	_, err := n.token() // '}'
	return err
}

// schemaArray writes an array of subschemas whose '[' has been read.
func (n *normalizer) schemaArray() error {
	n.out.WriteByte('[')
	for i := 0; n.dec.More(); i++ {
		n.path = append(n.path, strconv.Itoa(i))
		tok, err := n.token()
		if err != nil {
			return err
		}
		if i > 0 {
			n.out.WriteByte(',')
		}
		if err := n.schema(tok, false); err != nil {
			return err
		}
		n.path = n.path[:len(n.path)-1]
	}
	n.out.WriteByte(']')
	_, err := n.token() // ']'
	return err
}

// rawArray copies an array of data whose '[' has been read.
func (n *normalizer) rawArray() error {
	n.out.WriteByte('[')
	for i := 0; n.dec.More(); i++ {
		if i > 0 {
			n.out.WriteByte(',')
		}
		if err := n.raw(); err != nil {
			return err
		}
	}
	n.out.WriteByte(']')
	_, err := n.token() // ']'
	return err
}

// raw copies the next value unchanged.
func (n *normalizer) raw() error {
	var v json.RawMessage
	if err := n.dec.Decode(&v); err != nil {
		return n.fail("not valid JSON: %v", err)
	}
	n.out.Write(v)
	return nil
}

// writeKey writes key as a JSON string: as is when nothing in it needs
// escaping, the common case.
func writeKey(b *bytes.Buffer, key string) {
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			k, _ := json.Marshal(key)
			b.Write(k)
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(key)
	b.WriteByte('"')
}

func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}
