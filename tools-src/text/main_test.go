package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

func TestManifest(t *testing.T) {
	pure := tooltest.Flags{Idempotent: true, ReadOnly: true, TimeoutMS: 5000}
	tooltest.CheckManifest(t, map[string]tooltest.Flags{
		"text.count": pure, "text.find": pure, "text.case": pure, "text.slug": pure,
	})
}

func TestCount(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "empty", Tool: "text.count", Args: `{"text":""}`,
			Want: `{"words":0,"lines":0,"runes":0,"bytes":0}`},
		{Name: "one line no newline", Tool: "text.count", Args: `{"text":"hello world"}`,
			Want: `{"words":2,"lines":1,"runes":11,"bytes":11}`},
		{Name: "final newline is not a line", Tool: "text.count", Args: `{"text":"a b\nc\n"}`,
			Want: `{"words":3,"lines":2,"runes":6,"bytes":6}`},
		{Name: "blank lines count", Tool: "text.count", Args: `{"text":"\n\n"}`,
			Want: `{"words":0,"lines":2,"runes":2,"bytes":2}`},
		{Name: "runes differ from bytes", Tool: "text.count", Args: `{"text":"héllo 世界"}`,
			Want: `{"words":2,"lines":1,"runes":8,"bytes":13}`},
		{Name: "missing text", Tool: "text.count", Args: `{}`, Rejected: true},
		{Name: "unknown property", Tool: "text.count", Args: `{"text":"a","mode":"x"}`, Rejected: true},
	})
}

func TestFind(t *testing.T) {
	many := strings.Repeat("a", 150)
	tooltest.Run(t, []tooltest.Case{
		{Name: "offsets in runes with groups", Tool: "text.find",
			Args: `{"text":"é=1, ü=22","pattern":"(\\pL)=(\\d+)"}`,
			Want: `{"count":2,"truncated":false,"matches":[
				{"text":"é=1","start":0,"end":3,"groups":["é","1"]},
				{"text":"ü=22","start":5,"end":9,"groups":["ü","22"]}]}`},
		{Name: "no match is an empty list", Tool: "text.find", Args: `{"text":"abc","pattern":"\\d"}`,
			Want: `{"count":0,"truncated":false,"matches":[]}`},
		{Name: "unmatched optional group is empty", Tool: "text.find", Args: `{"text":"ab","pattern":"a(x)?b"}`,
			Want: `{"count":1,"truncated":false,"matches":[{"text":"ab","start":0,"end":2,"groups":[""]}]}`},
		{Name: "case-insensitive flag", Tool: "text.find", Args: `{"text":"Go go GO","pattern":"(?i)go","limit":2}`,
			Want: `{"count":2,"truncated":true,"matches":[{"text":"Go","start":0,"end":2},{"text":"go","start":3,"end":5}]}`},
		{Name: "default limit is 100", Tool: "text.find", Args: fmt.Sprintf(`{"text":%q,"pattern":"a"}`, many),
			Check: func(t *testing.T, r []byte) {
				if !strings.Contains(string(r), `"count":100,"truncated":true`) {
					t.Fatalf("want 100 matches and truncated, got %.80s", r)
				}
			}},
		{Name: "bad regexp names the problem", Tool: "text.find", Args: `{"text":"x","pattern":"(a"}`,
			Kind: abi.KindSchema, Msg: "missing closing )"},
		{Name: "backreference is not RE2", Tool: "text.find", Args: `{"text":"aa","pattern":"(a)\\1"}`,
			Kind: abi.KindSchema, Msg: "invalid escape sequence"},
		{Name: "limit above maximum", Tool: "text.find", Args: `{"text":"x","pattern":"x","limit":5000}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "limit must be between 1 and 1000"},
		{Name: "negative limit", Tool: "text.find", Args: `{"text":"x","pattern":"x","limit":-1}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "limit"},
		{Name: "empty pattern", Tool: "text.find", Args: `{"text":"x","pattern":""}`, Rejected: true},
	})
}

func TestCase(t *testing.T) {
	c := func(to, in, want string) tooltest.Case {
		return tooltest.Case{Name: to + " " + in, Tool: "text.case",
			Args: fmt.Sprintf(`{"text":%q,"to":%q}`, in, to), Want: fmt.Sprintf(`{"text":%q}`, want)}
	}
	tooltest.Run(t, []tooltest.Case{
		c("upper", "straße ok", "STRAßE OK"), // per-character mapping: ß has no single-rune upper case
		c("lower", "ÉCOLE Go", "école go"),
		c("title", "hello  wORLD\tagain", "Hello  World\tAgain"),
		c("snake", "HTTPServer error", "http_server_error"),
		c("snake", "fooBar-baz qux", "foo_bar_baz_qux"),
		c("snake", "utf8Decoder v2", "utf8_decoder_v2"),
		c("kebab", "  Some Title: Here! ", "some-title-here"),
		c("camel", "user_id value", "userIdValue"),
		c("camel", "XMLHttpRequest", "xmlHttpRequest"),
		c("camel", "", ""),
		{Name: "bad target", Tool: "text.case", Args: `{"text":"x","to":"pascal"}`,
			Rejected: true, Kind: abi.KindSchema, Msg: `got "pascal"`},
		{Name: "missing target", Tool: "text.case", Args: `{"text":"x"}`, Rejected: true},
	})
}

func TestSlug(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "basic", Tool: "text.slug", Args: `{"text":"Hello, World!"}`, Want: `{"slug":"hello-world"}`},
		{Name: "accents fold", Tool: "text.slug", Args: `{"text":"Crème Brûlée à Straße"}`,
			Want: `{"slug":"creme-brulee-a-strasse"}`},
		{Name: "combining accent", Tool: "text.slug", Args: `{"text":"Cafe\u0301 au lait"}`,
			Want: `{"slug":"cafe-au-lait"}`},
		{Name: "apostrophes vanish", Tool: "text.slug", Args: `{"text":"Don't stop — it’s fine"}`,
			Want: `{"slug":"dont-stop-its-fine"}`},
		{Name: "other scripts kept", Tool: "text.slug", Args: `{"text":"Привет мир 2024"}`,
			Want: `{"slug":"привет-мир-2024"}`},
		{Name: "underscore", Tool: "text.slug", Args: `{"text":"a b c","separator":"_"}`, Want: `{"slug":"a_b_c"}`},
		{Name: "cut at a word", Tool: "text.slug", Args: `{"text":"one two three","max_length":10}`,
			Want: `{"slug":"one-two"}`},
		{Name: "cut exactly at a word end", Tool: "text.slug", Args: `{"text":"one two three","max_length":7}`,
			Want: `{"slug":"one-two"}`},
		{Name: "long first word is cut hard", Tool: "text.slug", Args: `{"text":"abcdefgh ij","max_length":4}`,
			Want: `{"slug":"abcd"}`},
		{Name: "nothing to slug", Tool: "text.slug", Args: `{"text":"!!! ???"}`,
			Kind: abi.KindSchema, Msg: "no letters or digits"},
		{Name: "bad separator", Tool: "text.slug", Args: `{"text":"a","separator":"."}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "separator"},
	})
}
