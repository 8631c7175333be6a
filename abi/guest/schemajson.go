package guest

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// The schema writer: a JSONSchema as JSON without encoding/json's
// reflection. toolhost_describe writes every tool's schemas, and a cold
// module's first call runs it on wazero's interpreter before the call
// itself (the host checks the module's manifest section with it), where
// encoding schemas by reflection was most of the 0.15-0.2 s describe took.
// It writes byte for byte what json.Marshal wrote through the MarshalJSON
// methods before it (TestSchemaWriterMatchesMarshal).

// schemaWriter appends schemas to b.
type schemaWriter struct {
	b []byte
	// normal writes property schemas that are booleans as objects, as
	// abi.NormalizeSchema would: true as {}, false as {"not":{}}. What
	// normal form decides beyond that sets unsure, and the schema is then
	// written plainly and normalized (normalSchema).
	normal bool
	unsure bool
	depth  int // schema objects open
	err    error
}

// normalSchema returns s as abi.NormalizeSchema(json.Marshal(s)) would:
// written in normal form directly, or, when that form is not certain
// (extra keywords, a nil subschema, a name to escape, deep nesting),
// written plainly and normalized.
func normalSchema(s *JSONSchema) ([]byte, error) {
	w := schemaWriter{normal: true}
	w.schema(s, false)
	if w.err != nil {
		return nil, w.err
	}
	if !w.unsure && len(w.b) > 0 && w.b[0] == '{' {
		return w.b, nil
	}
	w = schemaWriter{}
	if w.schema(s, false); w.err != nil {
		return nil, w.err
	}
	return abi.NormalizeSchema(w.b)
}

// schema writes s, a property's schema when property is set.
func (w *schemaWriter) schema(s *JSONSchema, property bool) {
	start := len(w.b)
	switch {
	case s == nil:
		w.b = append(w.b, "null"...)
		w.unsure = true // abi.NormalizeSchema's error to give
		return
	case s.boolean != nil:
		w.b = strconv.AppendBool(w.b, *s.boolean)
	default:
		w.object(s)
		// The zero schema is true. Asked only of an empty object: the
		// reflective check, at every node, was 40% of the writer's time.
		if len(w.b) == start+2 && reflect.ValueOf(s).Elem().IsZero() {
			w.b = append(w.b[:start], "true"...)
		}
	}
	if !w.normal {
		return
	}
	switch string(w.b[start:]) {
	case "true":
		if property {
			w.b = append(w.b[:start], "{}"...)
		}
	case "false":
		if property {
			w.b = append(w.b[:start], `{"not":{}}`...)
		}
	case `{"not":{}}`:
		if !property {
			w.unsure = true // normal form writes it as false
		}
	}
}

// object writes s's keywords in JSONSchema's field order, each omitted as
// omitempty omits it, then its Extras in key order.
func (w *schemaWriter) object(s *JSONSchema) {
	if w.depth++; w.depth > abi.MaxSchemaDepth {
		w.unsure = true
	}
	defer func() { w.depth-- }()
	w.b = append(w.b, '{')
	o := len(w.b)
	w.str(o, "$id", s.ID)
	w.str(o, "$anchor", s.Anchor)
	w.str(o, "$ref", s.Ref)
	w.str(o, "$dynamicRef", s.DynamicRef)
	w.schemaMap(o, "$defs", s.Definitions)
	w.str(o, "$comment", s.Comments)
	w.list(o, "allOf", s.AllOf)
	w.list(o, "anyOf", s.AnyOf)
	w.list(o, "oneOf", s.OneOf)
	w.sub(o, "not", s.Not)
	w.sub(o, "if", s.If)
	w.sub(o, "then", s.Then)
	w.sub(o, "else", s.Else)
	w.schemaMap(o, "dependentSchemas", s.DependentSchemas)
	w.list(o, "prefixItems", s.PrefixItems)
	w.sub(o, "items", s.Items)
	w.sub(o, "contains", s.Contains)
	if s.Properties != nil {
		w.key(o, "properties")
		w.properties(s.Properties)
	}
	w.schemaMap(o, "patternProperties", s.PatternProperties)
	w.sub(o, "additionalProperties", s.AdditionalProperties)
	w.sub(o, "propertyNames", s.PropertyNames)
	w.str(o, "type", s.Type)
	w.values(o, "enum", s.Enum)
	if s.Const != nil {
		w.key(o, "const")
		w.value(s.Const)
	}
	w.number(o, "multipleOf", s.MultipleOf)
	w.number(o, "maximum", s.Maximum)
	w.number(o, "exclusiveMaximum", s.ExclusiveMaximum)
	w.number(o, "minimum", s.Minimum)
	w.number(o, "exclusiveMinimum", s.ExclusiveMinimum)
	w.count(o, "maxLength", s.MaxLength)
	w.count(o, "minLength", s.MinLength)
	w.str(o, "pattern", s.Pattern)
	w.count(o, "maxItems", s.MaxItems)
	w.count(o, "minItems", s.MinItems)
	w.flag(o, "uniqueItems", s.UniqueItems)
	w.count(o, "maxContains", s.MaxContains)
	w.count(o, "minContains", s.MinContains)
	w.count(o, "maxProperties", s.MaxProperties)
	w.count(o, "minProperties", s.MinProperties)
	if len(s.Required) > 0 {
		w.key(o, "required")
		w.strings(s.Required)
	}
	if len(s.DependentRequired) > 0 {
		w.key(o, "dependentRequired")
		w.b = append(w.b, '{')
		for i, k := range sortedKeys(s.DependentRequired) {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(appendString(w.b, k), ':')
			w.strings(s.DependentRequired[k])
		}
		w.b = append(w.b, '}')
	}
	w.str(o, "format", s.Format)
	w.str(o, "contentEncoding", s.ContentEncoding)
	w.str(o, "contentMediaType", s.ContentMediaType)
	w.sub(o, "contentSchema", s.ContentSchema)
	w.str(o, "title", s.Title)
	w.str(o, "description", s.Description)
	if s.Default != nil {
		w.key(o, "default")
		w.value(s.Default)
	}
	w.flag(o, "deprecated", s.Deprecated)
	w.flag(o, "readOnly", s.ReadOnly)
	w.flag(o, "writeOnly", s.WriteOnly)
	w.values(o, "examples", s.Examples)
	if len(s.Extras) > 0 {
		w.unsure = true // any keyword, with any value
		w.extras(o, s.Extras)
	}
	w.b = append(w.b, '}')
}

// key writes name as the next key of the object whose members start at o.
// It and the field writers below are not inlined: object calls them for
// fifty fields, and inlined they doubled its code (every Go tool links
// it).
//
//go:noinline
func (w *schemaWriter) key(o int, name string) {
	if len(w.b) > o {
		w.b = append(w.b, ',')
	}
	w.b = append(append(append(w.b, '"'), name...), '"', ':')
}

//go:noinline
func (w *schemaWriter) str(o int, name, v string) {
	if v != "" {
		w.key(o, name)
		w.b = appendString(w.b, v)
	}
}

//go:noinline
func (w *schemaWriter) flag(o int, name string, v bool) {
	if v {
		w.key(o, name)
		w.b = append(w.b, "true"...)
	}
}

//go:noinline
func (w *schemaWriter) count(o int, name string, v *uint64) {
	if v != nil {
		w.key(o, name)
		w.b = strconv.AppendUint(w.b, *v, 10)
	}
}

// number writes v as encoding/json writes a json.Number: as it is, when it
// is a JSON number.
func (w *schemaWriter) number(o int, name string, v json.Number) {
	if v == "" {
		return
	}
	w.key(o, name)
	// A number starts with - or a digit and ends with a digit: no white
	// space around it, which json.Valid would allow.
	if c, z := v[0], v[len(v)-1]; (c == '-' || '0' <= c && c <= '9') && '0' <= z && z <= '9' && json.Valid([]byte(v)) {
		w.b = append(w.b, v...)
		return
	}
	w.value(v) // json.Marshal's error
}

//go:noinline
func (w *schemaWriter) sub(o int, name string, s *JSONSchema) {
	if s != nil {
		w.key(o, name)
		w.schema(s, false)
	}
}

func (w *schemaWriter) list(o int, name string, l []*JSONSchema) {
	if len(l) == 0 {
		return
	}
	w.key(o, name)
	w.b = append(w.b, '[')
	for i, s := range l {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.schema(s, false)
	}
	w.b = append(w.b, ']')
}

func (w *schemaWriter) schemaMap(o int, name string, m map[string]*JSONSchema) {
	if len(m) == 0 {
		return
	}
	w.key(o, name)
	w.b = append(w.b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.name(k)
		w.schema(m[k], false)
	}
	w.b = append(w.b, '}')
}

// properties writes p as Properties.MarshalJSON does: in order.
func (w *schemaWriter) properties(p *Properties) {
	w.b = append(w.b, '{')
	for i, k := range p.keys {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.name(k)
		w.schema(p.vals[k], true)
	}
	w.b = append(w.b, '}')
}

// name writes a key of subschemas. abi.NormalizeSchema, when it rewrites a
// schema, writes such a key unescaped where encoding/json escapes it
// (<, >, &), so normal form is left to it then.
func (w *schemaWriter) name(k string) {
	for i := 0; i < len(k); i++ {
		if !htmlSafe(k[i]) {
			w.unsure = true
			break
		}
	}
	w.b = append(appendString(w.b, k), ':')
}

func (w *schemaWriter) strings(l []string) {
	if l == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, v := range l {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = appendString(w.b, v)
	}
	w.b = append(w.b, ']')
}

func (w *schemaWriter) values(o int, name string, l []any) {
	if len(l) == 0 {
		return
	}
	w.key(o, name)
	w.b = append(w.b, '[')
	for i, v := range l {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.value(v)
	}
	w.b = append(w.b, ']')
}

// value writes data (enum, const, default, examples): a string directly,
// anything else through encoding/json.
func (w *schemaWriter) value(v any) {
	if s, ok := v.(string); ok {
		w.b = appendString(w.b, s)
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(err)
		return
	}
	w.b = append(w.b, b...)
}

// extras writes the extra keywords after the others, in key order.
func (w *schemaWriter) extras(o int, extras map[string]any) {
	b, err := json.Marshal(extras)
	if err != nil {
		w.fail(err)
		return
	}
	if len(w.b) > o {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, b[1:len(b)-1]...)
}

// sortedKeys returns m's keys in order, as encoding/json writes them. It
// sorts with sort.Sort, which Go guests link already, where slices.Sort
// on strings added 17 KB of code to every tool.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Sort(sort.StringSlice(keys))
	return keys
}

func (w *schemaWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// htmlSafe reports whether encoding/json writes the byte c of a string as
// it is (with its HTML escaping, the default).
func htmlSafe(c byte) bool {
	return c >= 0x20 && c < utf8.RuneSelf && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// appendString appends s as encoding/json writes a string: HTML
// characters, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
