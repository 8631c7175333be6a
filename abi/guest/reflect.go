package guest

import (
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

// The schema reflector. It reproduces, for the one configuration the SDK
// used (every type inline, no $defs, the root struct expanded), what
// github.com/invopop/jsonschema v0.14 wrote, keyword for keyword and in the
// same order: tools' manifests must not change. It uses the standard
// library only. Linking invopop/jsonschema pulled go/parser, go/doc, net
// and a YAML library into every tool, whose package inits ran in every
// fresh instance (about 3 ms of a 10 ms call); reflection itself runs once
// per module, in toolhost_describe. TestReflectMatchesInvopop (native)
// compares the two on a corpus of types.
//
// Supported struct tags: json (name, "-", omitempty, omitzero, string,
// inline), jsonschema (title, description, type, anchor, required,
// nullable, "-", oneof_required, anyof_required, oneof_ref, oneof_type,
// anyof_ref, anyof_type, and per type: minLength, maxLength, pattern,
// format, readOnly, writeOnly, default, example, enum, multipleOf,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, minItems,
// maxItems, uniqueItems), jsonschema_description and jsonschema_extras.
// Methods a type may have: JSONSchema() *JSONSchema, JSONSchemaExtend(*JSONSchema),
// JSONSchemaAlias() any, JSONSchemaProperty(string) any,
// GetFieldDocString(string) string.

type (
	customSchema    interface{ JSONSchema() *JSONSchema }
	extendSchema    interface{ JSONSchemaExtend(*JSONSchema) }
	aliasSchema     interface{ JSONSchemaAlias() any }
	propertyAlias   interface{ JSONSchemaProperty(prop string) any }
	fieldDocStrings interface{ GetFieldDocString(fieldName string) string }
	protoEnum       interface{ EnumDescriptor() ([]byte, []int) }
)

var (
	customSchemaType    = reflect.TypeFor[customSchema]()
	extendSchemaType    = reflect.TypeFor[extendSchema]()
	aliasSchemaType     = reflect.TypeFor[aliasSchema]()
	propertyAliasType   = reflect.TypeFor[propertyAlias]()
	fieldDocStringsType = reflect.TypeFor[fieldDocStrings]()
	protoEnumType       = reflect.TypeFor[protoEnum]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	uint8Type           = reflect.TypeFor[uint8]()
)

// reflector holds the named types reflected so far, by name: the root
// struct's schema is taken from there, as invopop's ExpandedStruct did.
type reflector struct {
	defs map[string]*JSONSchema
}

// reflectRoot returns the schema of t, a struct or a pointer to one.
func reflectRoot(t reflect.Type) *JSONSchema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r := &reflector{defs: map[string]*JSONSchema{}}
	s := new(JSONSchema)
	bs := r.reflect(t)
	if def := r.defs[t.Name()]; def != nil {
		*s = *def
	} else {
		*s = *bs
	}
	if s.ID == "" {
		if base, ok := schemaIDBase(t.PkgPath()); ok {
			s.ID = base + "/" + snakeCase(t.Name())
		}
	}
	return s
}

func (r *reflector) reflect(t reflect.Type) *JSONSchema {
	if t.Kind() == reflect.Pointer {
		return r.reflect(t.Elem())
	}
	checkForeignHooks(t)
	if t.Implements(aliasSchemaType) {
		return r.reflect(reflect.TypeOf(reflect.New(t).Interface().(aliasSchema).JSONSchemaAlias()))
	}
	if s := r.custom(t); s != nil {
		return s
	}
	st := new(JSONSchema)
	if t.Implements(protoEnumType) {
		st.OneOf = []*JSONSchema{{Type: "string"}, {Type: "integer"}}
		return st
	}
	if isNamed(t, "net", "IP") {
		st.Type, st.Format = "string", "ipv4"
		return st
	}
	switch t.Kind() {
	case reflect.Struct:
		r.reflectStruct(t, st)
	case reflect.Slice, reflect.Array:
		r.reflectSliceOrArray(t, st)
	case reflect.Map:
		r.reflectMap(t, st)
	case reflect.Interface:
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		st.Type = "integer"
	case reflect.Float32, reflect.Float64:
		st.Type = "number"
	case reflect.Bool:
		st.Type = "boolean"
	case reflect.String:
		st.Type = "string"
	default:
		panic("unsupported type " + t.String())
	}
	if t.Implements(extendSchemaType) {
		reflect.New(t).Interface().(extendSchema).JSONSchemaExtend(st)
	}
	return st
}

func (r *reflector) custom(t reflect.Type) *JSONSchema {
	if t.Kind() == reflect.Pointer {
		return r.custom(t.Elem())
	}
	if !t.Implements(customSchemaType) {
		return nil
	}
	st := reflect.New(t).Interface().(customSchema).JSONSchema()
	r.define(t, st)
	return st
}

func (r *reflector) define(t reflect.Type, s *JSONSchema) {
	if name := t.Name(); name != "" {
		r.defs[name] = s
	}
}

func (r *reflector) reflectSliceOrArray(t reflect.Type, st *JSONSchema) {
	if t == rawMessageType {
		return
	}
	r.define(t, st)
	if t.Kind() == reflect.Array {
		n := uint64(t.Len())
		st.MinItems, st.MaxItems = &n, new(n)
	}
	if t.Kind() == reflect.Slice && t.Elem() == uint8Type {
		st.Type, st.ContentEncoding = "string", "base64"
		return
	}
	st.Type = "array"
	st.Items = r.reflect(t.Elem())
}

func (r *reflector) reflectMap(t reflect.Type, st *JSONSchema) {
	r.define(t, st)
	st.Type = "object"
	switch t.Key().Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		st.PatternProperties = map[string]*JSONSchema{"^[0-9]+$": r.reflect(t.Elem())}
		st.AdditionalProperties = falseSchema
		return
	}
	if t.Elem().Kind() != reflect.Interface {
		st.AdditionalProperties = r.reflect(t.Elem())
	}
}

func (r *reflector) reflectStruct(t reflect.Type, s *JSONSchema) {
	switch {
	case isNamed(t, "time", "Time"):
		s.Type, s.Format = "string", "date-time"
		return
	case isNamed(t, "net/url", "URL"):
		s.Type, s.Format = "string", "uri"
		return
	}
	r.define(t, s)
	s.Type = "object"
	s.Properties = new(Properties)
	if s.AdditionalProperties == nil {
		s.AdditionalProperties = falseSchema
	}
	r.reflectFields(s, t)
}

func (r *reflector) reflectFields(st *JSONSchema, t reflect.Type) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	var docString func(string) string
	if t.Implements(fieldDocStringsType) {
		docString = reflect.New(t).Interface().(fieldDocStrings).GetFieldDocString
	}
	propAlias := func(string) any { return nil }
	if t.Implements(propertyAliasType) {
		propAlias = reflect.New(t).Interface().(propertyAlias).JSONSchemaProperty
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, embed, required, nullable := fieldName(f)
		if name == "" {
			if embed {
				r.reflectFields(st, f.Type)
			}
			continue
		}
		var prop *JSONSchema
		if alias := propAlias(name); alias != nil {
			prop = r.reflect(reflect.TypeOf(alias))
		} else {
			prop = r.reflect(f.Type)
		}
		prop.keywordsFromTags(f, st, name)
		if docString != nil {
			prop.Description = docString(f.Name)
		}
		if nullable {
			prop = &JSONSchema{OneOf: []*JSONSchema{prop, {Type: "null"}}}
		}
		st.Properties.Set(name, prop)
		if required && !contains(st.Required, name) {
			st.Required = append(st.Required, name)
		}
	}
}

// fieldName reads a field's json and jsonschema tags: its property name
// ("" for none), whether its fields are inlined into the parent, and
// whether it is required and nullable.
func fieldName(f reflect.StructField) (name string, embed, required, nullable bool) {
	jsonTags := strings.Split(f.Tag.Get("json"), ",")
	schemaTags := strings.Split(f.Tag.Get("jsonschema"), ",")
	if jsonTags[0] == "-" || schemaTags[0] == "-" {
		return "", false, false, false
	}
	required = !contains(jsonTags[1:], "omitempty") && !contains(jsonTags[1:], "omitzero")
	if contains(schemaTags, "required") {
		required = true
	}
	nullable = contains(schemaTags, "nullable")
	if f.Anonymous && jsonTags[0] == "" {
		if f.Type.Kind() == reflect.Struct || f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			return "", true, false, false
		}
	}
	if contains(jsonTags[1:], "inline") {
		return "", true, false, false
	}
	name = f.Name
	if jsonTags[0] != "" {
		name = jsonTags[0]
	}
	if !f.Anonymous && f.PkgPath != "" {
		name = ""
	}
	return name, false, required, nullable
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func isNamed(t reflect.Type, pkg, name string) bool {
	return t.PkgPath() == pkg && t.Name() == name
}

// schemaIDBase is the base of the root schema's $id: "https://" and the
// type's package path, when net/url would see a host name holding a dot
// and a path there (what invopop checked; "main" has neither).
func schemaIDBase(pkgPath string) (string, bool) {
	host, _, ok := strings.Cut(pkgPath, "/")
	if !ok || !strings.Contains(host, ".") {
		return "", false
	}
	return strings.TrimRight("https://"+pkgPath, "/"), true
}

// snakeCase is invopop's ToSnakeCase without its regular expressions:
// "(.)([A-Z][a-z]+)" and then "([a-z0-9])([A-Z])" become "${1}-${2}",
// and the result is lower-cased.
func snakeCase(s string) string {
	s = snakeWords(s)
	s = snakeHumps(s)
	return strings.ToLower(s)
}

// snakeWords puts a dash before every capitalised word that follows
// another character: "(.)([A-Z][a-z]+)" → "${1}-${2}", leftmost first,
// matches not overlapping.
func snakeWords(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		end := j
		if r != '\n' && j+1 < len(s) && isUpper(s[j]) && isLower(s[j+1]) {
			end = j + 2
			for end < len(s) && isLower(s[end]) {
				end++
			}
		}
		if end == j {
			b.WriteString(s[i:j])
			i = j
			continue
		}
		b.WriteString(s[i:j])
		b.WriteByte('-')
		b.WriteString(s[j:end])
		i = end
	}
	return b.String()
}

// snakeHumps puts a dash between a lower-case letter or digit and an
// upper-case letter: "([a-z0-9])([A-Z])" → "${1}-${2}".
func snakeHumps(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+1 < len(s) && (isLower(s[i]) || '0' <= s[i] && s[i] <= '9') && isUpper(s[i+1]) {
			b.WriteString(s[i : i+1])
			b.WriteByte('-')
			b.WriteString(s[i+1 : i+2])
			i += 2
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
