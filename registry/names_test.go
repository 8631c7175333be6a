package registry_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/registry"
)

func TestSafeName(t *testing.T) {
	long := "a." + strings.Repeat("b", 70) // 72 characters
	tests := []struct {
		name, in, want string
	}{
		{"dots", "text.count", "text_count"},
		{"built-in", "toolhost.plan", "toolhost_plan"},
		{"already safe", "Text_Count-2", "Text_Count-2"},
		{"several dots", "a.b.c", "a_b_c"},
		{"unicode: one _ per rune, not per byte", "café.naïve", "caf__na_ve"},
		{"emoji and space", "x 🙂y", "x__y"},
		{"empty", "", "_"},
		{"exactly 64 stays", strings.Repeat("z", 63) + ".", strings.Repeat("z", 63) + "_"},
		// Over 64: 55 bytes, "_", 8 hex digits of sha256 of the manifest
		// name. Pinned: the hash must not change between versions or
		// machines, or clients would lose their tools.
		{"over 64 is hashed", long, "a_" + strings.Repeat("b", 53) + "_d162292c"},
		{"hash of the name before replacement", "a_" + strings.Repeat("b", 70), "a_" + strings.Repeat("b", 53) + "_1f4eb930"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := registry.SafeName(tt.in)
			if got != tt.want {
				t.Errorf("SafeName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !registry.ValidWireName(got) {
				t.Errorf("SafeName(%q) = %q is not a valid wire name", tt.in, got)
			}
			if registry.SafeName(tt.in) != got {
				t.Errorf("SafeName(%q) is not stable", tt.in)
			}
		})
	}
	if got := registry.WireName("gh_", strings.Repeat("x", 62)); got != "gh_"+strings.Repeat("x", 52)+"_c077ec58" || len(got) != 64 {
		t.Errorf("WireName with a prefix over 64 = %q (%d)", got, len(got))
	}
	if got := registry.WireName("gh_", "repo.search"); got != "gh_repo_search" {
		t.Errorf("WireName(gh_, repo.search) = %q", got)
	}
}

func TestValidWireName(t *testing.T) {
	for _, ok := range []string{"a", "text_count", "A-Z_09", strings.Repeat("x", 64)} {
		if !registry.ValidWireName(ok) {
			t.Errorf("ValidWireName(%q) = false", ok)
		}
	}
	for _, bad := range []string{"", "text.count", "a b", "é", strings.Repeat("x", 65), "a/b"} {
		if registry.ValidWireName(bad) {
			t.Errorf("ValidWireName(%q) = true", bad)
		}
	}
}

func TestWireNamesInRegistry(t *testing.T) {
	count := newTool("text.count", `{"type":"object"}`)
	exact := newTool("plain", `{"type":"object"}`)
	renamed := newTool("db.write", `{"type":"object"}`)
	renamed.WireName = "save"
	hidden := newTool("secret.thing", `{"type":"object"}`)
	hidden.Hidden = true
	reg, err := registry.New([]*registry.Tool{count, exact, renamed, hidden})
	if err != nil {
		t.Fatal(err)
	}
	if count.WireName != "text_count" || exact.WireName != "plain" || renamed.WireName != "save" {
		t.Errorf("wire names %q %q %q", count.WireName, exact.WireName, renamed.WireName)
	}
	for name, want := range map[string]*registry.Tool{
		"text_count": count, "text.count": count, "plain": exact, "save": renamed, "db.write": renamed,
		"secret.thing": hidden, // by manifest name: the caller decides what hidden means
	} {
		if got, ok := reg.Resolve(name); !ok || got != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", name, got, ok, want.Name)
		}
	}
	for _, name := range []string{"secret_thing", "db_write", "text-count", ""} {
		if got, ok := reg.Resolve(name); ok {
			t.Errorf("Resolve(%q) = %s, want nothing", name, got.Name)
		}
	}
	if _, ok := reg.Lookup("text_count"); ok {
		t.Error("Lookup takes manifest names only")
	}
}

func TestWireNameClashes(t *testing.T) {
	tool := func(name, wire string, hidden bool) *registry.Tool {
		tl := newTool(name, `{"type":"object"}`)
		tl.WireName, tl.Hidden = wire, hidden
		return tl
	}
	tests := []struct {
		name  string
		tools []*registry.Tool
		want  string // "" for no clash
	}{
		{"dot and underscore", []*registry.Tool{tool("a.b", "", false), tool("a_b", "", false)},
			`tools "a.b" and "a_b" would both be listed as "a_b"; give one another wire name in the config ([tools."a_b"] name = "…", or a module prefix), or hide it (expose = false)`},
		{"same operator name", []*registry.Tool{tool("x", "same", false), tool("y", "same", false)},
			`tools "x" and "y" would both be listed as "same"`},
		{"prefixed apart", []*registry.Tool{tool("a.b", "", false), tool("a_b", "p_a_b", false)}, ""},
		{"wire name is another's manifest name", []*registry.Tool{tool("m", "k", false), tool("k", "z", false)}, ""},
		{"long names hash apart", []*registry.Tool{tool("a."+strings.Repeat("b", 70), "", false), tool("a_"+strings.Repeat("b", 70), "", false)}, ""},
		{"hidden takes no wire name", []*registry.Tool{tool("a.b", "", true), tool("a_b", "", false)}, ""},
		{"hidden manifest name", []*registry.Tool{tool("a_b", "", true), tool("a.b", "", false)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := registry.New(tt.tools)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			var ce *registry.ClashError
			if !errors.As(err, &ce) {
				t.Fatalf("New error = %v, want a *ClashError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant   …%s…", err, tt.want)
			}
		})
	}
	// A name that is one tool's wire name and another's manifest name
	// resolves to the tool clients see under it.
	for _, other := range []*registry.Tool{tool("a_b", "", true), tool("a_b", "p_a_b", false)} {
		visible := tool("a.b", "", false)
		reg, err := registry.New([]*registry.Tool{other, visible})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := reg.Resolve("a_b"); got != visible {
			t.Errorf("Resolve(a_b) = %s, want the listed a.b", got.Name)
		}
	}
}
