package main

import (
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

func TestManifest(t *testing.T) {
	pure := tooltest.Flags{Idempotent: true, ReadOnly: true, TimeoutMS: 5000}
	tooltest.CheckManifest(t, map[string]tooltest.Flags{
		"json.get": pure, "json.merge": pure, "json.select": pure,
	})
}

// rfc6901 is the example document of RFC 6901 section 5.
const rfc6901 = `{"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,"i\\j":5,"k\"l":6," ":7,"m~n":8}`

func TestGet(t *testing.T) {
	get := func(name, pointer, want string) tooltest.Case {
		return tooltest.Case{Name: name, Tool: "json.get",
			Args: `{"doc":` + rfc6901 + `,"pointer":"` + pointer + `"}`, Want: `{"value":` + want + `}`}
	}
	fail := func(name, doc, pointer, msg string) tooltest.Case {
		return tooltest.Case{Name: name, Tool: "json.get",
			Args: `{"doc":` + doc + `,"pointer":"` + pointer + `"}`, Kind: abi.KindSchema, Msg: msg}
	}
	tooltest.Run(t, []tooltest.Case{
		get("whole document", "", rfc6901),
		get("member", "/foo", `["bar","baz"]`),
		get("element", "/foo/0", `"bar"`),
		get("empty key", "/", `0`),
		get("escaped slash", "/a~1b", `1`),
		get("percent is literal", "/c%d", `2`),
		get("backslash key", `/i\\j`, `5`),
		get("quote key", `/k\"l`, `6`),
		get("space key", "/ ", `7`),
		get("escaped tilde", "/m~0n", `8`),
		{Name: "big integers survive", Tool: "json.get",
			Args: `{"doc":{"id":12345678901234567890123},"pointer":"/id"}`, Want: `{"value":12345678901234567890123}`,
			Check: func(t *testing.T, r []byte) {
				if string(r) != `{"value":12345678901234567890123}` {
					t.Fatalf("number was rewritten: %s", r)
				}
			}},
		{Name: "null document", Tool: "json.get", Args: `{"doc":null,"pointer":""}`, Want: `{"value":null}`},
		fail("missing member names the token", `{"a":{"b":1,"c":2}}`, "/a/x/y",
			`token 2 ("x") failed at /a: object has no member "x" (members: "b", "c")`),
		fail("index out of range", `{"a":[1,2]}`, "/a/2", `token 2 ("2") failed at /a: index 2 is out of range (array has 2 elements)`),
		fail("dash is past the end", `[1]`, "/-", `"-" names the element after the last one`),
		fail("leading zero", `[1,2]`, "/01", "without leading zeros"),
		fail("negative index", `[1,2]`, "/-1", "non-negative integer"),
		fail("descend into scalar", `{"a":1}`, "/a/b", `token 2 ("b") failed at /a: a number has no members`),
		fail("first token", `{"z":1}`, "/q", `failed at the document root`),
		fail("bad escape", `{"a":1}`, "/a~2", `"~" must be followed by 0 or 1`),
		fail("no leading slash", `{"a":1}`, "a", `must be "" or start with "/"`),
		{Name: "missing doc", Tool: "json.get", Args: `{"pointer":""}`, Rejected: true, Kind: abi.KindSchema, Msg: "doc is required"},
	})
}

func TestMerge(t *testing.T) {
	m := func(name, doc, patch, want string) tooltest.Case {
		return tooltest.Case{Name: name, Tool: "json.merge",
			Args: `{"doc":` + doc + `,"patch":` + patch + `}`, Want: `{"doc":` + want + `}`}
	}
	// The test cases of RFC 7386 appendix A.
	tooltest.Run(t, []tooltest.Case{
		m("A1", `{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`),
		m("A2", `{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`),
		m("A3", `{"a":"b"}`, `{"a":null}`, `{}`),
		m("A4", `{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`),
		m("A5", `{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`),
		m("A6", `{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`),
		m("A7", `{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`),
		m("A8", `{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`),
		m("A9", `["a","b"]`, `["c","d"]`, `["c","d"]`),
		m("A10", `{"a":"b"}`, `["c"]`, `["c"]`),
		m("A11", `{"a":"foo"}`, `null`, `null`),
		m("A12", `{"a":"foo"}`, `"bar"`, `"bar"`),
		m("A13", `{"e":null}`, `{"a":1}`, `{"e":null,"a":1}`),
		m("A14", `[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`),
		m("A15", `{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`),
		{Name: "missing patch", Tool: "json.merge", Args: `{"doc":{}}`, Rejected: true, Kind: abi.KindSchema, Msg: "patch is required"},
	})
}

const store = `{"items":[{"name":"pen","tags":["a","b"]},{"name":"ink"},{"name":"pad","price":2.5}],
	"a":{"b":[10,20,30]},"content-type":"json","n":null,"s":"héllo"}`

func TestSelect(t *testing.T) {
	sel := func(name, path, want string) tooltest.Case {
		return tooltest.Case{Name: name, Tool: "json.select", Args: `{"doc":` + store + `,"path":"` + path + `"}`, Want: want}
	}
	fail := func(name, path, msg string) tooltest.Case {
		return tooltest.Case{Name: name, Tool: "json.select", Args: `{"doc":` + store + `,"path":"` + path + `"}`,
			Kind: abi.KindSchema, Msg: msg}
	}
	tooltest.Run(t, []tooltest.Case{
		sel("identity", ".", `{"count":1,"values":[`+store+`]}`),
		sel("iterate then member", ".items[].name", `{"count":3,"values":["pen","ink","pad"]}`),
		sel("missing member is null", ".items[].price", `{"count":3,"values":[null,null,2.5]}`),
		sel("nested index", ".a.b[0]", `{"count":1,"values":[10]}`),
		sel("negative index", ".a.b[-1]", `{"count":1,"values":[30]}`),
		sel("index out of range is null", ".a.b[7]", `{"count":1,"values":[null]}`),
		sel("dot before bracket", ".a.b.[1]", `{"count":1,"values":[20]}`),
		sel("slice", ".a.b[1:]", `{"count":1,"values":[[20,30]]}`),
		sel("slice negative", ".a.b[:-1]", `{"count":1,"values":[[10,20]]}`),
		sel("slice string by characters", ".s[1:3]", `{"count":1,"values":["él"]}`),
		sel("quoted key", `.\"content-type\"`, `{"count":1,"values":["json"]}`),
		sel("bracket key", `.[\"a\"][\"b\"][2]`, `{"count":1,"values":[30]}`),
		sel("iterate object values in key order", ".items[2][]", `{"count":2,"values":["pad",2.5]}`),
		sel("iterate twice", ".items[0].tags[]", `{"count":2,"values":["a","b"]}`),
		sel("iterate everything", ".[]", `{"count":5,"values":[{"b":[10,20,30]},"json",`+
			`[{"name":"pen","tags":["a","b"]},{"name":"ink"},{"name":"pad","price":2.5}],null,"héllo"]}`),
		sel("step on null is null", ".n.x[0]", `{"count":1,"values":[null]}`),
		sel("surrounding spaces", "  .a.b[0] ", `{"count":1,"values":[10]}`),
		fail("member of array", ".items.name", `step .name at column 7: cannot take member "name" of an array`),
		fail("iterate string", ".s[]", "cannot iterate over a string"),
		fail("iterate missing tags", ".items[].tags[]", "cannot iterate over null"),
		fail("recursive descent", "..a", "column 1: '.' must be followed by"),
		fail("no leading dot", "items", "must start with '.'"),
		fail("unclosed bracket", ".a[0", "missing ']'"),
		fail("bad index", ".a[x]", `"x" is not an integer`),
		fail("pipe", ".a | .b", "unexpected ' '"),
		fail("unterminated key", `.\"abc`, "unterminated quoted key"),
		{Name: "empty path", Tool: "json.select", Args: `{"doc":{},"path":""}`, Rejected: true},
	})
}
