package guest

import (
	"encoding/json"
)

// JSONSchema is a JSON Schema (draft 2020-12) object as the SDK reflects it from
// a Go type. Its fields, their JSON names and their order are those of
// github.com/invopop/jsonschema's Schema, which the SDK used until it
// stopped linking that package (its imports cost every fresh instance
// milliseconds of start-up), so manifests are byte for byte what they were.
//
// A type can adjust its reflected schema by implementing
//
//	JSONSchemaExtend(*guest.JSONSchema)
//
// or replace it with
//
//	JSONSchema() *guest.JSONSchema
//
// A JSONSchema is not safe for concurrent use.
type JSONSchema struct {
	ID          string                 `json:"$id,omitempty"`
	Anchor      string                 `json:"$anchor,omitempty"`
	Ref         string                 `json:"$ref,omitempty"`
	DynamicRef  string                 `json:"$dynamicRef,omitempty"`
	Definitions map[string]*JSONSchema `json:"$defs,omitempty"`
	Comments    string                 `json:"$comment,omitempty"`

	AllOf []*JSONSchema `json:"allOf,omitempty"`
	AnyOf []*JSONSchema `json:"anyOf,omitempty"`
	OneOf []*JSONSchema `json:"oneOf,omitempty"`
	Not   *JSONSchema   `json:"not,omitempty"`

	If               *JSONSchema            `json:"if,omitempty"`
	Then             *JSONSchema            `json:"then,omitempty"`
	Else             *JSONSchema            `json:"else,omitempty"`
	DependentSchemas map[string]*JSONSchema `json:"dependentSchemas,omitempty"`

	PrefixItems []*JSONSchema `json:"prefixItems,omitempty"`
	Items       *JSONSchema   `json:"items,omitempty"`
	Contains    *JSONSchema   `json:"contains,omitempty"`

	Properties           *Properties            `json:"properties,omitempty"`
	PatternProperties    map[string]*JSONSchema `json:"patternProperties,omitempty"`
	AdditionalProperties *JSONSchema            `json:"additionalProperties,omitempty"`
	PropertyNames        *JSONSchema            `json:"propertyNames,omitempty"`

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

	ContentEncoding  string      `json:"contentEncoding,omitempty"`
	ContentMediaType string      `json:"contentMediaType,omitempty"`
	ContentSchema    *JSONSchema `json:"contentSchema,omitempty"`

	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Default     any    `json:"default,omitempty"`
	Deprecated  bool   `json:"deprecated,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	WriteOnly   bool   `json:"writeOnly,omitempty"`
	Examples    []any  `json:"examples,omitempty"`

	// Extras are further keywords, written after the others in key order
	// (the jsonschema_extras struct tag sets them).
	Extras map[string]any `json:"-"`

	boolean *bool // the schema is true or false
}

var (
	// trueSchema and falseSchema are the boolean schemas.
	trueSchema  = &JSONSchema{boolean: new(true)}
	falseSchema = &JSONSchema{boolean: new(false)}
)

// MarshalJSON writes a boolean schema as true or false, an empty one as
// true, and Extras after the other keywords.
func (s *JSONSchema) MarshalJSON() ([]byte, error) {
	var w schemaWriter
	w.schema(s, false)
	return w.b, w.err
}

// Properties are a schema's properties in the order they were set (the
// order of the struct's fields), which is the order they are written in.
// The zero value is empty and ready to use.
type Properties struct {
	keys []string
	vals map[string]*JSONSchema
}

// Set sets the schema of property name; a property set again keeps its
// place.
func (p *Properties) Set(name string, s *JSONSchema) {
	if p.vals == nil {
		p.vals = map[string]*JSONSchema{}
	}
	if _, ok := p.vals[name]; !ok {
		p.keys = append(p.keys, name)
	}
	p.vals[name] = s
}

// Get returns the schema of property name, if it has one.
func (p *Properties) Get(name string) (*JSONSchema, bool) {
	s, ok := p.vals[name]
	return s, ok
}

// Delete removes property name.
func (p *Properties) Delete(name string) {
	if _, ok := p.vals[name]; !ok {
		return
	}
	delete(p.vals, name)
	for i, k := range p.keys {
		if k == name {
			p.keys = append(p.keys[:i], p.keys[i+1:]...)
			break
		}
	}
}

// Names returns the property names in order.
func (p *Properties) Names() []string { return append([]string(nil), p.keys...) }

// MarshalJSON writes the properties as one object, in order.
func (p *Properties) MarshalJSON() ([]byte, error) {
	var w schemaWriter
	w.properties(p)
	return w.b, w.err
}
