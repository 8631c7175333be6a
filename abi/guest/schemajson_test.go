package guest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// legacySchema is JSONSchema with the MarshalJSON the SDK had before the
// schema writer: json.Marshal by reflection. TestSchemaWriterMatchesMarshal
// holds the writer to it.
type legacySchema struct {
	ID          string                   `json:"$id,omitempty"`
	Anchor      string                   `json:"$anchor,omitempty"`
	Ref         string                   `json:"$ref,omitempty"`
	DynamicRef  string                   `json:"$dynamicRef,omitempty"`
	Definitions map[string]*legacySchema `json:"$defs,omitempty"`
	Comments    string                   `json:"$comment,omitempty"`

	AllOf []*legacySchema `json:"allOf,omitempty"`
	AnyOf []*legacySchema `json:"anyOf,omitempty"`
	OneOf []*legacySchema `json:"oneOf,omitempty"`
	Not   *legacySchema   `json:"not,omitempty"`

	If               *legacySchema            `json:"if,omitempty"`
	Then             *legacySchema            `json:"then,omitempty"`
	Else             *legacySchema            `json:"else,omitempty"`
	DependentSchemas map[string]*legacySchema `json:"dependentSchemas,omitempty"`

	PrefixItems []*legacySchema `json:"prefixItems,omitempty"`
	Items       *legacySchema   `json:"items,omitempty"`
	Contains    *legacySchema   `json:"contains,omitempty"`

	Properties           *legacyProps             `json:"properties,omitempty"`
	PatternProperties    map[string]*legacySchema `json:"patternProperties,omitempty"`
	AdditionalProperties *legacySchema            `json:"additionalProperties,omitempty"`
	PropertyNames        *legacySchema            `json:"propertyNames,omitempty"`

	Type              string              `json:"type,omitempty"`
	Enum              []any               `json:"enum,omitempty"`
	Const             any                 `json:"const,omitempty"`
	MultipleOf        json.Number         `json:"multipleOf,omitempty"`
	Maximum           json.Number         `json:"maximum,omitempty"`
	ExclusiveMaximum  json.Number         `json:"exclusiveMaximum,omitempty"`
	Minimum           json.Number         `json:"minimum,omitempty"`
	ExclusiveMinimum  json.Number         `json:"exclusiveMinimum,omitempty"`
	MaxLength         *uint64             `json:"maxLength,omitempty"`
	MinLength         *uint64             `json:"minLength,omitempty"`
	Pattern           string              `json:"pattern,omitempty"`
	MaxItems          *uint64             `json:"maxItems,omitempty"`
	MinItems          *uint64             `json:"minItems,omitempty"`
	UniqueItems       bool                `json:"uniqueItems,omitempty"`
	MaxContains       *uint64             `json:"maxContains,omitempty"`
	MinContains       *uint64             `json:"minContains,omitempty"`
	MaxProperties     *uint64             `json:"maxProperties,omitempty"`
	MinProperties     *uint64             `json:"minProperties,omitempty"`
	Required          []string            `json:"required,omitempty"`
	DependentRequired map[string][]string `json:"dependentRequired,omitempty"`

	Format string `json:"format,omitempty"`

	ContentEncoding  string        `json:"contentEncoding,omitempty"`
	ContentMediaType string        `json:"contentMediaType,omitempty"`
	ContentSchema    *legacySchema `json:"contentSchema,omitempty"`

	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Default     any    `json:"default,omitempty"`
	Deprecated  bool   `json:"deprecated,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	WriteOnly   bool   `json:"writeOnly,omitempty"`
	Examples    []any  `json:"examples,omitempty"`

	Extras map[string]any `json:"-"`

	boolean *bool // the schema is true or false
}

type legacyProps struct {
	keys []string
	vals map[string]*legacySchema
}

func (s *legacySchema) MarshalJSON() ([]byte, error) {
	if s.boolean != nil {
		if *s.boolean {
			return []byte("true"), nil
		}
		return []byte("false"), nil
	}
	if reflect.DeepEqual(&legacySchema{}, s) {
		return []byte("true"), nil
	}
	type plain legacySchema
	b, err := json.Marshal((*plain)(s))
	if err != nil || len(s.Extras) == 0 {
		return b, err
	}
	m, err := json.Marshal(s.Extras)
	if err != nil {
		return nil, err
	}
	if len(b) == 2 {
		return m, nil
	}
	b[len(b)-1] = ','
	return append(b, m[1:]...), nil
}

func (p *legacyProps) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range p.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(p.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// toLegacy copies s field by field (by name, so a field JSONSchema gains
// and legacySchema lacks fails the test) into a legacySchema.
func toLegacy(s *JSONSchema) *legacySchema {
	if s == nil {
		return nil
	}
	l := new(legacySchema)
	src, dst := reflect.ValueOf(s).Elem(), reflect.ValueOf(l).Elem()
	for i := range src.NumField() {
		f := src.Type().Field(i)
		d := dst.FieldByName(f.Name)
		if !d.IsValid() {
			panic("legacySchema has no field " + f.Name)
		}
		v := src.Field(i)
		switch x := reflect.NewAt(f.Type, v.Addr().UnsafePointer()).Elem().Interface().(type) {
		case *JSONSchema:
			l.set(d, toLegacy(x))
		case []*JSONSchema:
			if x != nil {
				out := make([]*legacySchema, len(x))
				for j, e := range x {
					out[j] = toLegacy(e)
				}
				l.set(d, out)
			}
		case map[string]*JSONSchema:
			if x != nil {
				out := make(map[string]*legacySchema, len(x))
				for k, e := range x {
					out[k] = toLegacy(e)
				}
				l.set(d, out)
			}
		case *Properties:
			if x != nil {
				p := &legacyProps{keys: x.keys}
				if x.vals != nil {
					p.vals = map[string]*legacySchema{}
					for k, e := range x.vals {
						p.vals[k] = toLegacy(e)
					}
				}
				l.set(d, p)
			}
		default:
			reflect.NewAt(d.Type(), d.Addr().UnsafePointer()).Elem().Set(reflect.NewAt(f.Type, v.Addr().UnsafePointer()).Elem())
		}
	}
	return l
}

func (l *legacySchema) set(d reflect.Value, v any) {
	reflect.NewAt(d.Type(), d.Addr().UnsafePointer()).Elem().Set(reflect.ValueOf(v))
}

// TestSchemaWriterMatchesMarshal: on the reflector's corpus and on random
// schemas (every field, empty and nil collections, nil subschemas, extra
// keywords, strings to escape, invalid numbers, deep nesting), the writer
// writes what json.Marshal wrote by reflection, and normalSchema what
// abi.NormalizeSchema made of that, or fails where they failed.
func TestSchemaWriterMatchesMarshal(t *testing.T) {
	var schemas []*JSONSchema
	for _, typ := range []reflect.Type{reflect.TypeFor[corpusAll](), reflect.TypeFor[*corpusTop](),
		reflect.TypeFor[corpusInner](), reflect.TypeFor[struct{}](), reflect.TypeFor[abiLike]()} {
		schemas = append(schemas, reflectRoot(typ))
	}
	// {"not":{}}, which normal form writes as false but for a property
	// or the root: Not's schema is empty yet not zero.
	notEmpty := func() *JSONSchema { return &JSONSchema{Not: &JSONSchema{Enum: []any{}}} }
	props := &Properties{}
	props.Set("p", notEmpty())
	props.Set("q", trueSchema)
	schemas = append(schemas, notEmpty(), &JSONSchema{Type: "object", AllOf: []*JSONSchema{notEmpty()}},
		&JSONSchema{Type: "object", Properties: props, Items: notEmpty()})
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		schemas = append(schemas, randomSchema(r, 0))
	}
	deep := &JSONSchema{Type: "object"}
	for range abi.MaxSchemaDepth + 1 {
		p := &Properties{}
		p.Set("x", deep)
		deep = &JSONSchema{Type: "object", Properties: p, AdditionalProperties: falseSchema}
	}
	schemas = append(schemas, deep)
	var normalized, fast int
	for i, s := range schemas {
		want, wantErr := json.Marshal(toLegacy(s))
		got, err := json.Marshal(s)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("schema %d: json.Marshal = %s, %v\nby reflection: %s, %v", i, got, err, want, wantErr)
		}
		if err != nil {
			continue
		}
		wantNormal, wantErr := abi.NormalizeSchema(want)
		gotNormal, err := normalSchema(s)
		if (err != nil) != (wantErr != nil) || string(gotNormal) != string(wantNormal) {
			t.Fatalf("schema %d: normalSchema = %s, %v\nabi.NormalizeSchema: %s, %v\nplain: %s", i, gotNormal, err, wantNormal, wantErr, want)
		}
		if err == nil {
			normalized++
			if w := (schemaWriter{normal: true}); !w.check(s) {
				fast++
			}
		}
	}
	t.Logf("%d schemas: %d normalized, %d of them written in normal form directly", len(schemas), normalized, fast)
	// Both ways of normalSchema must have been taken, often.
	if fast < len(schemas)/10 || normalized-fast < len(schemas)/10 {
		t.Fatalf("%d of %d schemas normalized, %d written in normal form directly: the random schemas miss a path", normalized, len(schemas), fast)
	}
}

// check reports whether writing s leaves normal form to abi.NormalizeSchema.
func (w schemaWriter) check(s *JSONSchema) bool {
	w.schema(s, false)
	return w.unsure || w.b[0] != '{'
}

var randomStrings = []string{"", "a", "x-y", "<b>&", "q\"uo\\te", "tab\there\n", "\b\f\r", "\x01\x1f", "é", "\u2028\u2029", "bad\xffutf8", "^[a-z]+$"}

func randomSchema(r *rand.Rand, depth int) *JSONSchema {
	k := r.IntN(12)
	if depth == 0 && r.IntN(4) > 0 {
		k = 4 // mostly an object at the root, which normal form needs
	}
	switch k {
	case 0:
		return trueSchema
	case 1:
		return falseSchema
	case 2:
		return &JSONSchema{}
	case 3:
		if depth > 0 && r.IntN(8) == 0 {
			return nil
		}
	}
	s := &JSONSchema{}
	str := func() string { return randomStrings[r.IntN(len(randomStrings))] }
	sub := func() *JSONSchema {
		if depth > 2 || r.IntN(12) > 0 {
			return nil
		}
		return randomSchema(r, depth+1)
	}
	list := func() []*JSONSchema {
		if depth > 2 || r.IntN(8) > 0 {
			return nil
		}
		l := make([]*JSONSchema, r.IntN(3))
		for i := range l {
			l[i] = randomSchema(r, depth+1)
		}
		return l
	}
	smap := func() map[string]*JSONSchema {
		if depth > 2 || r.IntN(10) > 0 {
			return nil
		}
		m := map[string]*JSONSchema{}
		for range r.IntN(3) {
			m[str()] = randomSchema(r, depth+1)
		}
		return m
	}
	num := func() json.Number {
		if r.IntN(400) == 0 {
			return json.Number([]string{"abc", " 1", "01", "1 "}[r.IntN(4)])
		}
		return json.Number([]string{"", "", "", "1", "-2.5", "1e400"}[r.IntN(6)])
	}
	count := func() *uint64 {
		if r.IntN(4) > 0 {
			return nil
		}
		return new(uint64(r.IntN(100)))
	}
	data := func() any {
		return []any{nil, "s", "<&>", 1.5, true, map[string]any{"k": "v"}, []any{1, "two"}, json.Number("3")}[r.IntN(8)]
	}
	datas := func() []any {
		if r.IntN(3) > 0 {
			return nil
		}
		l := make([]any, r.IntN(3))
		for i := range l {
			l[i] = data()
		}
		return l
	}
	flag := func() bool { return r.IntN(4) == 0 }
	if r.IntN(3) == 0 {
		s.ID, s.Anchor, s.Ref, s.DynamicRef, s.Comments = str(), str(), str(), str(), str()
	}
	s.Definitions, s.DependentSchemas, s.PatternProperties = smap(), smap(), smap()
	s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems = list(), list(), list(), list()
	s.Not, s.If, s.Then, s.Else, s.Items, s.Contains = sub(), sub(), sub(), sub(), sub(), sub()
	s.AdditionalProperties, s.PropertyNames, s.ContentSchema = sub(), sub(), sub()
	if depth <= 2 && r.IntN(2) == 0 {
		s.Properties = &Properties{}
		for range r.IntN(4) {
			s.Properties.Set(str(), randomSchema(r, depth+1))
		}
	}
	s.Type, s.Pattern, s.Format, s.Title, s.Description = str(), str(), str(), str(), str()
	s.ContentEncoding, s.ContentMediaType = str(), str()
	s.Enum, s.Examples = datas(), datas()
	if r.IntN(4) == 0 {
		s.Const = data()
	}
	if r.IntN(4) == 0 {
		s.Default = data()
	}
	s.MultipleOf, s.Maximum, s.ExclusiveMaximum, s.Minimum, s.ExclusiveMinimum = num(), num(), num(), num(), num()
	s.MaxLength, s.MinLength, s.MaxItems, s.MinItems = count(), count(), count(), count()
	s.MaxContains, s.MinContains, s.MaxProperties, s.MinProperties = count(), count(), count(), count()
	s.UniqueItems, s.Deprecated, s.ReadOnly, s.WriteOnly = flag(), flag(), flag(), flag()
	if r.IntN(3) == 0 {
		s.Required = []string{str(), str()}[:r.IntN(3)]
	}
	if r.IntN(6) == 0 {
		s.DependentRequired = map[string][]string{str(): {str()}, str(): nil}
	}
	if r.IntN(8) == 0 {
		s.Extras = map[string]any{"x-" + str(): data()}
		if r.IntN(4) == 0 {
			s.Extras["items"] = 5 // no schema: abi.NormalizeSchema refuses it
		}
	}
	return s
}
