package guest

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The result writer: a tool's result as JSON without encoding/json's
// encoder. Every fresh instance's call is its first, and json.Marshal's
// first use of a type builds its caches by reflection (typeFields, with
// the decoder's name maps, a sync.Map per cache, an encoder per field):
// writing without them cut about 3% of a fresh text.count's CPU
// (docs/BENCHMARKS.md, "Issue 26, session 15"), and costs a warm call
// nothing. The writer looks at a type once, cheaply, and writes byte for
// byte what json.Marshal writes (TestResultJSONMatchesMarshal). Where
// encoding/json's rules are more than it knows (a Marshaler or
// TextMarshaler anywhere, embedded fields, the string and omitzero
// options, two fields of one name, []byte, keys that are not strings,
// json.Number, NaN, nesting past 1000), the result goes to json.Marshal
// whole, so its output and errors are encoding/json's.

// marshalResult is json.Marshal(v).
func marshalResult(v any) ([]byte, error) { return appendMarshal(nil, v) }

// appendMarshal appends json.Marshal(v) to b; on an error, b is as it was.
func appendMarshal(b []byte, v any) ([]byte, error) {
	if out, ok := appendResult(b, v); ok {
		return out, nil
	}
	m, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, m...), nil
}

// appendResult appends v as json.Marshal would, or reports false when v
// is outside what the writer knows.
func appendResult(b []byte, v any) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), true
	}
	enc := encoderFor(reflect.TypeOf(v))
	if enc == nil {
		return b, false
	}
	return enc(b, reflect.ValueOf(v), 0)
}

// encoder appends v; depth counts the pointers, slices and maps it is
// inside, as encoding/json's cycle check does.
type encoder func(b []byte, v reflect.Value, depth int) ([]byte, bool)

// maxDepth is where encoding/json starts looking for cycles; past it the
// writer leaves the value to json.Marshal, which reports a cycle or goes on.
const maxDepth = 1000

// typeEncoder stands for a type's encoder while it is built, so that a
// recursive type's fields can refer to it; enc stays nil when the type
// turns out to be beyond the writer.
type typeEncoder struct {
	enc encoder
	// bound is encode as a method value, made once: a method value made
	// on each lookup is an allocation in every call's result.
	bound encoder
}

func (e *typeEncoder) encode(b []byte, v reflect.Value, depth int) ([]byte, bool) {
	if e.enc == nil {
		return b, false
	}
	return e.enc(b, v, depth)
}

// encoders holds every type looked at; nil for a type beyond the writer.
// A plain map, made on first use (the SDK does nothing at initialisation
// that every fresh instance would pay for): an instance runs one call at a
// time (see the package doc).
var encoders map[reflect.Type]*typeEncoder

func encoderFor(t reflect.Type) encoder {
	if e, ok := encoders[t]; ok {
		if e == nil {
			return nil
		}
		return e.bound
	}
	if encoders == nil {
		encoders = make(map[reflect.Type]*typeEncoder)
	}
	e := &typeEncoder{}
	e.bound = e.encode
	encoders[t] = e
	if e.enc = newEncoder(t); e.enc == nil {
		encoders[t] = nil
		return nil
	}
	return e.bound
}

// customised reports whether encoding/json would call a method of t's to
// encode it, or treats it specially.
func customised(t reflect.Type) bool {
	marshalerType, textMarshalerType := reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()
	if t == reflect.TypeFor[json.Number]() || t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return true
	}
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
		return false
	}
	p := reflect.PointerTo(t)
	return p.Implements(marshalerType) || p.Implements(textMarshalerType)
}

//go:noinline
func newEncoder(t reflect.Type) encoder {
	if customised(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint
	case reflect.Float32:
		return encodeFloat32
	case reflect.Float64:
		return encodeFloat64
	case reflect.String:
		return encodeString
	case reflect.Interface:
		return encodeInterface
	case reflect.Pointer:
		return newPointerEncoder(t)
	case reflect.Struct:
		return newStructEncoder(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // base64, or the element's own methods
		}
		return newArrayEncoder(t)
	case reflect.Array:
		return newArrayEncoder(t)
	case reflect.Map:
		return newMapEncoder(t)
	}
	return nil // complex numbers, channels, functions: json.Marshal's errors
}

func encodeBool(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendBool(b, v.Bool()), true
}

func encodeInt(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendInt(b, v.Int(), 10), true
}

func encodeUint(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return strconv.AppendUint(b, v.Uint(), 10), true
}

func encodeFloat32(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return appendFloat(b, v.Float(), 32)
}

func encodeFloat64(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return appendFloat(b, v.Float(), 64)
}

// appendFloat is encoding/json's floatEncoder: the shortest decimal that
// reads back as f, in exponent form only for very small or large values,
// and no NaN or infinity (json.Marshal's error to give).
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

func encodeString(b []byte, v reflect.Value, _ int) ([]byte, bool) {
	return appendString(b, v.String()), true
}

func encodeInterface(b []byte, v reflect.Value, depth int) ([]byte, bool) {
	if v.IsNil() {
		return append(b, "null"...), true
	}
	e := v.Elem()
	enc := encoderFor(e.Type())
	if enc == nil {
		return b, false
	}
	return enc(b, e, depth)
}

func newPointerEncoder(t reflect.Type) encoder {
	elem := encoderFor(t.Elem())
	if elem == nil {
		return nil
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if v.IsNil() {
			return append(b, "null"...), true
		}
		if depth++; depth > maxDepth {
			return b, false
		}
		return elem(b, v.Elem(), depth)
	}
}

func newArrayEncoder(t reflect.Type) encoder {
	elem := encoderFor(t.Elem())
	if elem == nil {
		return nil
	}
	slice := t.Kind() == reflect.Slice
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if slice {
			if v.IsNil() {
				return append(b, "null"...), true
			}
			if depth++; depth > maxDepth {
				return b, false
			}
		}
		b = append(b, '[')
		for i := range v.Len() {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = elem(b, v.Index(i), depth); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
}

// mapEntry is one entry of a map being written, sorted by key.
type mapEntry struct {
	key   string
	value reflect.Value
}

type byKey []mapEntry

func (s byKey) Len() int           { return len(s) }
func (s byKey) Less(i, j int) bool { return s[i].key < s[j].key }
func (s byKey) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }

func newMapEncoder(t reflect.Type) encoder {
	if t.Key().Kind() != reflect.String || customised(t.Key()) {
		return nil // keys written from numbers or by MarshalText
	}
	elem := encoderFor(t.Elem())
	if elem == nil {
		return nil
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		if v.IsNil() {
			return append(b, "null"...), true
		}
		if depth++; depth > maxDepth {
			return b, false
		}
		entries := make(byKey, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			entries = append(entries, mapEntry{it.Key().String(), it.Value()})
		}
		sort.Sort(entries)
		b = append(b, '{')
		for i, e := range entries {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, e.key), ':')
			var ok bool
			if b, ok = elem(b, e.value, depth); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
}

// structField is a field the writer writes: its index, its key as
// written ("name":), and whether omitempty drops it when empty.
type structField struct {
	index     int
	key       []byte
	omitEmpty bool
	enc       encoder
}

func newStructEncoder(t reflect.Type) encoder {
	named, ok := jsonFields(t)
	if !ok {
		return nil
	}
	fields := make([]structField, len(named))
	for i, f := range named {
		fields[i] = structField{index: f.index, key: append(appendString(nil, f.name), ':'), omitEmpty: f.omitEmpty}
		if fields[i].enc = encoderFor(t.Field(f.index).Type); fields[i].enc == nil {
			return nil
		}
	}
	return func(b []byte, v reflect.Value, depth int) ([]byte, bool) {
		b = append(b, '{')
		first := true
		for i := range fields {
			f := &fields[i]
			fv := v.Field(f.index)
			if f.omitEmpty && isEmptyValue(fv) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, f.key...)
			var ok bool
			if b, ok = f.enc(b, fv, depth); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
}

// jsonField is a struct field as encoding/json names it.
type jsonField struct {
	index     int
	name      string
	omitEmpty bool
}

// jsonFields lists t's fields as encoding/json names them, or reports
// false where its rules go beyond a flat struct with distinct names.
//
//go:noinline
func jsonFields(t reflect.Type) ([]jsonField, bool) {
	var fields []jsonField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false // embedded fields: encoding/json's promotion rules
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = sf.Name
		}
		f := jsonField{index: i, name: name}
		for opts != "" {
			var opt string
			opt, opts, _ = strings.Cut(opts, ",")
			switch opt {
			case "omitempty":
				f.omitEmpty = true
			case "string", "omitzero":
				return nil, false
			}
		}
		for _, g := range fields {
			if g.name == name {
				return nil, false // encoding/json keeps the dominant field, if any
			}
		}
		fields = append(fields, f)
	}
	return fields, true
}

// validTagName is encoding/json's isValidTag: a tag name it would not
// use leaves the field its Go name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}
