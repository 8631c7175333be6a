package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Types on both sides of the writer's boundary.
type (
	resultCounts struct {
		Words int `json:"words"`
		Lines int `json:"lines"`
		Runes int `json:"runes"`
		Bytes int `json:"bytes"`
	}
	resultTags struct {
		Plain     string
		Renamed   string `json:"renamed"`
		Skipped   string `json:"-"`
		Dash      string `json:"-,"`
		Omitted   int    `json:"omitted,omitempty"`
		OmitAny   any    `json:",omitempty"`
		Invalid   string `json:"bad\"name"`
		HTML      string `json:"a<b>&c"`
		Unicode   string `json:"é"`
		Unknown   int    `json:"unknown,whatever"`
		Nested    *resultTags
		List      []resultCounts
		Array     [2]uint8
		Map       map[string]float64
		unexport  int
		Interface any
		Float32   float32
		Pointer   *int
	}
	resultNode struct {
		Name string        `json:"name"`
		Next *resultNode   `json:"next,omitempty"`
		Kids []*resultNode `json:"kids"`
	}
	resultString string
	resultKey    string
	resultMap    map[resultKey]resultString

	// Beyond the writer: json.Marshal writes these.
	resultMarshaler     struct{ V int }
	resultPtrMarshaler  struct{ V int }
	resultTextMarshaler int
	resultTextKey       string
	resultEmbedded      struct{ resultCounts }
	resultEmbeddedPtr   struct{ *resultCounts }
	resultQuoted        struct {
		N int `json:"n,string"`
	}
	resultOmitZero struct {
		T time.Time `json:",omitzero"`
	}
	resultDuplicateNamed struct {
		A int
		B int `json:"A"`
	}
)

func (resultMarshaler) MarshalJSON() ([]byte, error)     { return []byte(`"custom"`), nil }
func (*resultPtrMarshaler) MarshalJSON() ([]byte, error) { return []byte(`"ptr"`), nil }
func (resultTextMarshaler) MarshalText() ([]byte, error) { return []byte("text"), nil }
func (k resultTextKey) MarshalText() ([]byte, error)     { return []byte("k-" + string(k)), nil }
func (r resultTags) String() string                      { return fmt.Sprint(r.Plain, r.unexport) }

// sameAsMarshal fails t unless marshalResult(v) is json.Marshal(v), bytes
// and error, and reports whether the writer wrote it itself.
func sameAsMarshal(t *testing.T, v any) bool {
	t.Helper()
	want, werr := json.Marshal(v)
	got, err := marshalResult(v)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("%#v: error %v, json.Marshal's %v", v, err, werr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%#v:\n got %s\nwant %s", v, got, want)
	}
	_, ok := appendResult(nil, v)
	return ok
}

func TestResultJSONMatchesMarshal(t *testing.T) {
	one := 1
	loop := &resultNode{Name: "loop"}
	loop.Next = loop
	deep := &resultNode{Name: "deep"}
	for range 1100 {
		deep = &resultNode{Name: "d", Next: deep}
	}
	written := []any{
		nil, true, 0, -7, int8(-128), uint64(math.MaxUint64), uintptr(9), "", "plain",
		"<script>&amp;</script>", "\u2028\u2029", "\x00\x1f\t\n\r\b\f", "\xff\xfe bad utf-8", `quote " back \ slash`, "é世界",
		0.0, math.Copysign(0, -1), 1.0, 123.456, 1e-6, 1e-7, 9.99e-7, 1e20, 1e21, 1.5e300, -2.5e-10, math.MaxFloat64, math.SmallestNonzeroFloat64,
		float32(0.1), float32(1e-7), float32(3.4e38), float32(1e21), float32(-1e20),
		resultCounts{5, 1, 19, 19}, &resultCounts{}, (*resultCounts)(nil),
		resultTags{}, resultTags{Plain: "p", Renamed: "r", Skipped: "s", Dash: "d", Omitted: 3, OmitAny: "x", Invalid: "i", HTML: "h",
			Unicode: "u", Unknown: 4, Nested: &resultTags{List: []resultCounts{}}, List: []resultCounts{{1, 2, 3, 4}},
			Array: [2]uint8{1, 255}, Map: map[string]float64{"b": 2, "a": 1, "<": 0.5}, unexport: 9, Interface: map[string]any{"z": []any{1.5, "s", nil, true}},
			Float32: 0.3, Pointer: &one},
		&resultNode{Name: "root", Kids: []*resultNode{{Name: "a"}, nil, {Name: "b", Next: &resultNode{Name: "c"}}}},
		[]string{}, []string(nil), []any{nil, 1, "a"}, [0]int{}, [3]string{"a", "b", "c"}, map[string]any{}, map[string]any(nil),
		map[string]*resultCounts{"x": nil, "y": {Words: 1}}, resultString("named"), resultMap{"k": "v", "a": "b"},
		[]resultString{"a"}, struct{}{}, &struct{ A []int }{}, map[string][]map[string]int{"m": {{"n": 1}}},
		time.Duration(5), []time.Duration{1, 2}, struct{ E error }{errors.New("x")},
	}
	for _, v := range written {
		if !sameAsMarshal(t, v) {
			t.Errorf("%T: json.Marshal wrote it, not the writer", v)
		}
	}
	declined := []any{
		resultMarshaler{1}, resultPtrMarshaler{2}, &resultPtrMarshaler{3}, []resultPtrMarshaler{{4}}, resultTextMarshaler(5),
		map[resultTextKey]int{"a": 1}, map[int]string{1: "a"}, resultEmbedded{resultCounts{Words: 1}}, resultEmbeddedPtr{},
		resultQuoted{7}, resultOmitZero{}, resultDuplicateNamed{1, 2}, []byte("bytes"), json.RawMessage(`{"a":1}`),
		json.Number("12"), time.Time{}, math.NaN(), math.Inf(1), []float64{1, math.Inf(-1)}, float32(math.Inf(1)),
		map[string]any{"f": func() {}}, make(chan int), complex(1, 2), loop, []any{resultMarshaler{}},
		struct{ F resultPtrMarshaler }{}, deep,
	}
	for _, v := range declined {
		if sameAsMarshal(t, v) {
			t.Errorf("%T: the writer wrote it; the test expects json.Marshal to", v)
		}
	}
}

// TestResultJSONRandomTypes builds struct, slice, map and pointer types at
// run time (reflect.StructOf and friends) with tags drawn from the cases
// encoding/json treats apart, fills them with edge values, and holds the
// writer to json.Marshal on each.
func TestResultJSONRandomTypes(t *testing.T) {
	g := resultGen{r: rand.New(rand.NewPCG(1, 26))}
	var fast int
	const n = 3000
	for range n {
		typ := g.typ(0)
		v := reflect.New(typ).Elem()
		g.fill(v, 0)
		if sameAsMarshal(t, v.Interface()) {
			fast++
		}
	}
	// The draw is fixed, so this only fails when the writer declines
	// types it used to write.
	if fast < n/3 {
		t.Errorf("the writer wrote %d of %d random values itself; want at least a third", fast, n)
	}
	t.Logf("the writer wrote %d of %d, json.Marshal the rest", fast, n)
}

type resultGen struct{ r *rand.Rand }

var (
	resultLeafTypes = []reflect.Type{
		reflect.TypeFor[bool](), reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[int64](),
		reflect.TypeFor[uint16](), reflect.TypeFor[uint64](), reflect.TypeFor[float32](), reflect.TypeFor[float64](),
		reflect.TypeFor[string](), reflect.TypeFor[any](), reflect.TypeFor[resultString](), reflect.TypeFor[time.Duration](),
		reflect.TypeFor[resultMarshaler](), reflect.TypeFor[resultPtrMarshaler](), reflect.TypeFor[resultTextMarshaler](),
		reflect.TypeFor[json.Number](), reflect.TypeFor[[]byte](), reflect.TypeFor[resultCounts](),
	}
	resultFieldNames = []string{"A", "B", "Name", "X_y", "Ü"}
	resultTagsPool   = []string{
		``, ``, ``, `json:"-"`, `json:"-,"`, `json:"n"`, `json:"n,omitempty"`, `json:",omitempty"`, `json:"a<b"`,
		`json:"bad\"q"`, `json:"s,string"`, `json:"z,omitzero"`, `json:"é"`, `json:"A"`, `json:"sp ace"`, `json:"x,omitempty,unknown"`,
	}
	resultStrings = []string{"", "plain", "<&>", "\u2028", "\x00\x1f", "\xff", "é", `"\`, "Ü"}
	resultFloats  = []float64{0, math.Copysign(0, -1), 1e-7, 1e-6, 1e21, 1e20, 123.456, -0.1, 3.4e38, 5e-324}
)

func (g *resultGen) typ(depth int) reflect.Type {
	if depth > 3 {
		return resultLeafTypes[g.r.IntN(len(resultLeafTypes))]
	}
	switch g.r.IntN(7) {
	case 0:
		return reflect.PointerTo(g.typ(depth + 1))
	case 1:
		return reflect.SliceOf(g.typ(depth + 1))
	case 2:
		return reflect.ArrayOf(g.r.IntN(3), g.typ(depth+1))
	case 3:
		return reflect.MapOf(reflect.TypeFor[string](), g.typ(depth+1))
	case 4, 5:
		fields := make([]reflect.StructField, g.r.IntN(5))
		used := map[string]bool{}
		for i := range fields {
			name := resultFieldNames[g.r.IntN(len(resultFieldNames))]
			for used[name] {
				name += "x"
			}
			used[name] = true
			fields[i] = reflect.StructField{Name: name, Type: g.typ(depth + 1), Tag: reflect.StructTag(resultTagsPool[g.r.IntN(len(resultTagsPool))])}
		}
		return reflect.StructOf(fields)
	}
	return resultLeafTypes[g.r.IntN(len(resultLeafTypes))]
}

func (g *resultGen) fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(g.r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int64:
		if g.r.IntN(3) > 0 {
			v.SetInt(g.r.Int64() >> g.r.IntN(64) * int64(1-2*g.r.IntN(2)) % (1 << (v.Type().Bits() - 1)))
		}
	case reflect.Uint16, reflect.Uint64, reflect.Uint8:
		if g.r.IntN(3) > 0 {
			v.SetUint(g.r.Uint64() >> (64 - v.Type().Bits()))
		}
	case reflect.Float32, reflect.Float64:
		f := resultFloats[g.r.IntN(len(resultFloats))]
		if g.r.IntN(50) == 0 {
			f = math.NaN()
		}
		v.SetFloat(f)
	case reflect.String:
		v.SetString(resultStrings[g.r.IntN(len(resultStrings))])
	case reflect.Pointer:
		if g.r.IntN(4) > 0 {
			p := reflect.New(v.Type().Elem())
			g.fill(p.Elem(), depth+1)
			v.Set(p)
		}
	case reflect.Slice:
		if g.r.IntN(4) > 0 {
			s := reflect.MakeSlice(v.Type(), g.r.IntN(3), 3)
			for i := range s.Len() {
				g.fill(s.Index(i), depth+1)
			}
			v.Set(s)
		}
	case reflect.Array:
		for i := range v.Len() {
			g.fill(v.Index(i), depth+1)
		}
	case reflect.Map:
		if g.r.IntN(4) > 0 {
			m := reflect.MakeMap(v.Type())
			for range g.r.IntN(4) {
				e := reflect.New(v.Type().Elem()).Elem()
				g.fill(e, depth+1)
				m.SetMapIndex(reflect.ValueOf(resultStrings[g.r.IntN(len(resultStrings))]), e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				g.fill(v.Field(i), depth+1)
			}
		}
	case reflect.Interface:
		if depth < 4 && g.r.IntN(3) > 0 {
			e := reflect.New(g.typ(depth + 1)).Elem()
			g.fill(e, depth+1)
			v.Set(e)
		}
	}
}

// TestResultJSONKeysEscaped: a tag name is written as encoding/json
// writes it, HTML characters escaped.
func TestResultJSONKeysEscaped(t *testing.T) {
	b, ok := appendResult(nil, struct {
		A int `json:"<&>"`
	}{1})
	if want := `{"\u003c\u0026\u003e":1}`; !ok || string(b) != want {
		t.Errorf("got %s, %v; want %s", b, ok, want)
	}
	if strings.Contains(string(b), "<") {
		t.Error("an HTML character was written as it is")
	}
}
