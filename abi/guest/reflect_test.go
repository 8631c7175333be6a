package guest

import (
	"bytes"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi/guest/internal/jsonschema"
)

// The corpus of TestReflectMatchesInvopop: every kind, tag and hook the
// reflector reads.
type (
	corpusInner struct {
		A string `json:"a" jsonschema:"title=inner a,enum=x,enum=y"`
		B *int   `json:"b,omitempty" jsonschema:"minimum=-3,maximum=2.5,default=1"`
	}
	CorpusEmbedded struct {
		E1 string  `json:"e1"`
		E2 float64 `json:"e2,omitzero" jsonschema:"exclusiveMinimum=0,multipleOf=0.5,example=1.5"`
	}
	// corpusDup's field has the name of one of corpusAll's, which
	// embeds it: the later one wins and keeps the earlier one's place.
	corpusDup struct {
		Str int `json:"str"`
	}
	corpusNamed []string
	corpusMap   map[string]corpusInner
	corpusAlias struct{ Ignored int }
	corpusProto int32
	corpusDocs  struct {
		Doc  string `json:"doc"`
		More int    `json:"more"`
	}
	corpusPropAlias struct {
		P string `json:"p"`
		Q string `json:"q"`
	}
	corpusAll struct {
		CorpusEmbedded
		*corpusInner `json:"inner_ptr,omitempty"`
		Inlined      struct {
			In bool `json:"in" jsonschema:"default=true"`
		} `json:",inline"`
		Str       string          `json:"str" jsonschema:"minLength=1,maxLength=9,pattern=^a\\,b$,format=email,readOnly=true,writeOnly=false,default=d,example=e1,example=e2,enum=q"`
		Desc      string          `json:"desc" jsonschema_description:"from the other tag" jsonschema:"anchor=here"`
		Int8      int8            `json:"int8,string" jsonschema:"minimum=1"`
		Uint      uint64          `json:"uint"`
		F32       float32         `json:"f32" jsonschema:"maximum=x,exclusiveMaximum=3,enum=1,enum=no"`
		Bool      bool            `json:"bool" jsonschema:"default=false"`
		Bools     []bool          `json:"bools" jsonschema:"default=true,minItems=1,maxItems=3,uniqueItems=true"`
		Ints      []int           `json:"ints" jsonschema:"minimum=2,enum=3"`
		Strs      []string        `json:"strs" jsonschema:"format=uri,pattern=^x,enum=k,minLength=2"`
		Arr       [3]int          `json:"arr"`
		Bytes     []byte          `json:"bytes"`
		Raw       json.RawMessage `json:"raw"`
		Any       any             `json:"any"`
		Anys      map[string]any  `json:"anys"`
		ByInt     map[int]string  `json:"by_int"`
		ByUint    map[uint]string `json:"by_uint"`
		Named     corpusNamed     `json:"named"`
		Nested    corpusMap       `json:"nested"`
		When      time.Time       `json:"when" jsonschema:"description=a time"`
		WhenPtr   *time.Time      `json:"when_ptr,omitempty"`
		IP        net.IP          `json:"ip"`
		URL       url.URL         `json:"url"`
		Alias     corpusAlias     `json:"alias"`
		Proto     corpusProto     `json:"proto"`
		Docs      corpusDocs      `json:"docs"`
		PropAlias corpusPropAlias `json:"prop_alias"`
		Null      *string         `json:"null" jsonschema:"nullable"`
		Req       string          `json:"req,omitempty" jsonschema:"required"`
		One1      *string         `json:"one1,omitempty" jsonschema:"oneof_required=g1"`
		One2      *string         `json:"one2,omitempty" jsonschema:"oneof_required=g2"`
		One3      *string         `json:"one3,omitempty" jsonschema:"oneof_required=g1"`
		Any1      *string         `json:"any1,omitempty" jsonschema:"anyof_required=h"`
		OneRef    string          `json:"one_ref" jsonschema:"oneof_ref=#/a;#/b"`
		AnyRefs   []string        `json:"any_refs" jsonschema:"anyof_ref=#/c"`
		OneType   string          `json:"one_type" jsonschema:"oneof_type=string;null"`
		AnyType   int             `json:"any_type" jsonschema:"anyof_type=integer;string"`
		TypeTag   int             `json:"type_tag" jsonschema:"type=string,maxLength=4"`
		Extras    string          `json:"extras" jsonschema_extras:"minimum=3,x-a=1,x-a=2,x-b=true,x-b=false,x-c=v"`
		corpusDup
		Skip    string            `json:"-"`
		SkipToo string            `json:"skip_too" jsonschema:"-"`
		NoTag   string            //nolint
		dropped string            //nolint:unused
		Deep    [][]corpusInner   `json:"deep"`
		PtrMap  map[string]*int   `json:"ptr_map"`
		Titled  string            `json:"titled" jsonschema:"title=T,description=d\\,e"`
		Empty   struct{}          `json:"empty"`
		Nums    map[int8][]string `json:"nums"`
	}
	corpusTop struct {
		Inner corpusInner `json:"inner"`
	}
)

func (corpusAlias) JSONSchemaAlias() any             { return corpusInner{} }
func (corpusProto) EnumDescriptor() ([]byte, []int)  { return nil, nil }
func (corpusDocs) GetFieldDocString(f string) string { return "doc of " + f }
func (corpusPropAlias) JSONSchemaProperty(p string) any {
	if p == "q" {
		return 0
	}
	return nil
}

// TestReflectMatchesInvopop holds the SDK's reflector to the output of
// github.com/invopop/jsonschema v0.14.0, configured as the SDK configured
// it before it stopped linking that package ({DoNotReference: true,
// ExpandedStruct: true}, Version cleared), on a corpus of types: tool
// manifests must not change. The module is standard library only, so that
// output is kept in testdata/invopop-schemas.json, written by invopop
// itself when the SDK still lived in the server's module (commit history:
// "guest SDK: a module of its own"); a change to the corpus needs its
// entry written the same way.
func TestReflectMatchesInvopop(t *testing.T) {
	var golden map[string]json.RawMessage
	readGolden(t, "testdata/invopop-schemas.json", &golden)
	corpus := []reflect.Type{
		reflect.TypeFor[corpusAll](),
		reflect.TypeFor[*corpusTop](),
		reflect.TypeFor[corpusInner](),
		reflect.TypeFor[CorpusEmbedded](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[struct {
			X int `json:"x"`
		}](),
		reflect.TypeFor[corpusDocs](),
		reflect.TypeFor[abiLike](),
	}
	if len(golden) != len(corpus) {
		t.Fatalf("testdata/invopop-schemas.json has %d entries, the corpus %d types", len(golden), len(corpus))
	}
	for _, typ := range corpus {
		t.Run(typ.String(), func(t *testing.T) {
			want, ok := golden[typ.String()]
			if !ok {
				t.Fatalf("no invopop output for %s in testdata/invopop-schemas.json", typ)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, want); err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(reflectRoot(typ))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != compact.String() {
				t.Errorf("reflected schema differs from invopop's\n got: %s\nwant: %s", got, compact.String())
			}
		})
	}
}

func readGolden(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// abiLike is named like a type of a package with a dotted host, so the
// root schema gets an $id: this package's path is such a one.
type abiLike struct {
	HTTPServerURL string `json:"u"`
}

// TestSnakeCaseMatchesInvopop: the $id names of root schemas, against
// invopop's ToSnakeCase on the same inputs (testdata/invopop-snake.json:
// hand-picked names and 2,000 random strings of a small alphabet, written
// by invopop v0.14.0 as TestReflectMatchesInvopop's corpus was).
func TestSnakeCaseMatchesInvopop(t *testing.T) {
	var pairs [][2]string
	readGolden(t, "testdata/invopop-snake.json", &pairs)
	if len(pairs) < 1000 {
		t.Fatalf("testdata/invopop-snake.json has %d cases", len(pairs))
	}
	for _, c := range pairs {
		if got := snakeCase(c[0]); got != c[1] {
			t.Errorf("snakeCase(%q) = %q, invopop's ToSnakeCase %q", c[0], got, c[1])
		}
	}
}

// A type whose hook takes invopop's schema type is refused by name, not
// silently published without its hook's changes.
type foreignHook struct{}

func (foreignHook) JSONSchemaExtend(*jsonschema.Schema) {}

func TestForeignSchemaHookPanics(t *testing.T) {
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "JSONSchemaExtend(*jsonschema.Schema)") {
			t.Fatalf("recover() = %v, want a panic naming the hook", r)
		}
	}()
	reflectRoot(reflect.TypeFor[foreignHook]())
}

// The SDK's own hooks are called: an extension adds to the reflected
// schema and a JSONSchema method replaces it.
type (
	extended struct {
		A string `json:"a"`
	}
	replaced struct{}
	withBoth struct {
		E extended `json:"e"`
		R replaced `json:"r"`
	}
)

func (extended) JSONSchemaExtend(s *JSONSchema) { s.MinProperties = new(uint64(1)) }
func (replaced) JSONSchema() *JSONSchema        { return &JSONSchema{Type: "string", Format: "custom"} }

func TestSchemaHooks(t *testing.T) {
	got, err := json.Marshal(reflectRoot(reflect.TypeFor[withBoth]()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"$id":"https://github.com/toolhost/toolhost/abi/guest/with-both","properties":{"e":{"properties":{"a":{"type":"string"}},"additionalProperties":false,"type":"object","minProperties":1,"required":["a"]},` +
		`"r":{"type":"string","format":"custom"}},"additionalProperties":false,"type":"object","required":["e","r"]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
