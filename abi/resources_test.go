package abi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

func TestParseManifestOffers(t *testing.T) {
	doc := manifest(`"resources":[{"uri":"notes://todo","name":"todo","mimeType":"text/plain"}],`+
		`"resource_templates":[{"uriTemplate":"notes://{name}","name":"note"}],`+
		`"prompts":[{"name":"review","arguments":[{"name":"lang","required":true}]}]`, tool("t"))
	m, err := abi.ParseManifest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !m.Offers() || m.Resources[0].URI != "notes://todo" || m.ResourceTemplates[0].URITemplate != "notes://{name}" ||
		m.Prompts[0].Name != "review" || !m.Prompts[0].Arguments[0].Required {
		t.Errorf("parsed offers = %+v %+v %+v", m.Resources, m.ResourceTemplates, m.Prompts)
	}
	// A module may offer prompts or resources alone.
	if _, err := abi.ParseManifest([]byte(`{"abi":1,"prompts":[{"name":"p"}]}`)); err != nil {
		t.Errorf("a prompt-only module: %v", err)
	}
}

func TestParseManifestOffersInvalid(t *testing.T) {
	res := func(fields string) string { return manifest(`"resources":[`+fields+`]`, tool("t")) }
	tpl := func(fields string) string { return manifest(`"resource_templates":[`+fields+`]`, tool("t")) }
	prm := func(fields string) string { return manifest(`"prompts":[`+fields+`]`, tool("t")) }
	many := make([]string, abi.MaxOffers+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"p%d"}`, i)
	}
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"uri empty", res(`{"uri":"","name":"a"}`), []string{"resources[0]: uri is empty"}},
		{"uri relative", res(`{"uri":"notes/todo","name":"a"}`), []string{"resources[0]", "not an absolute URI"}},
		{"uri scheme only", res(`{"uri":"notes:","name":"a"}`), []string{"not an absolute URI"}},
		{"uri with space", res(`{"uri":"notes://a b","name":"a"}`), []string{"space or a control character"}},
		{"uri with newline", res(`{"uri":"notes://a\nb","name":"a"}`), []string{"control character"}},
		{"uri too long", res(`{"uri":"notes://` + strings.Repeat("a", abi.MaxURILen) + `","name":"a"}`), []string{"over the limit of 2048"}},
		{"uri twice", res(`{"uri":"notes://a","name":"a"},{"uri":"notes://a","name":"b"}`), []string{`resource "notes://a" is declared twice`}},
		{"resource without name", res(`{"uri":"notes://a"}`), []string{`resource "notes://a": name is empty`}},
		{"description oversize", res(`{"uri":"notes://a","name":"a","description":"` + strings.Repeat("d", abi.MaxOfferText+1) + `"}`), []string{"description is 8193 bytes"}},
		{"size negative", res(`{"uri":"notes://a","name":"a","size":-1}`), []string{"size must be >= 0"}},
		{"resource icon bad", res(`{"uri":"notes://a","name":"a","icons":[{"src":"http://x"}]}`), []string{"icons[0]"}},
		{"template unbalanced", tpl(`{"uriTemplate":"notes://{name","name":"n"}`), []string{"resource_templates[0]", "without its '}'"}},
		{"template stray brace", tpl(`{"uriTemplate":"notes://name}","name":"n"}`), []string{"without its '{'"}},
		{"template empty expression", tpl(`{"uriTemplate":"notes://{}","name":"n"}`), []string{"empty expression"}},
		{"template operator only", tpl(`{"uriTemplate":"notes://{+}","name":"n"}`), []string{"is not a name"}},
		{"template bad variable", tpl(`{"uriTemplate":"notes://{a-b}","name":"n"}`), []string{`variable "a-b" holds '-'`}},
		{"template bad modifier", tpl(`{"uriTemplate":"notes://{a:0}","name":"n"}`), []string{"modifier"}},
		{"template no scheme", tpl(`{"uriTemplate":"{name}","name":"n"}`), []string{"does not start with a scheme"}},
		{"template twice", tpl(`{"uriTemplate":"n://{a}","name":"n"},{"uriTemplate":"n://{a}","name":"m"}`), []string{"declared twice"}},
		{"prompt name bad", prm(`{"name":"a b"}`), []string{"prompts[0]", `"a b"`}},
		{"prompt name slash", prm(`{"name":"a/b"}`), []string{"prompts[0]"}},
		{"prompt twice", prm(`{"name":"p"},{"name":"p"}`), []string{`prompt "p" is declared twice`}},
		{"argument twice", prm(`{"name":"p","arguments":[{"name":"x"},{"name":"x"}]}`), []string{`prompt "p": argument "x" is declared twice`}},
		{"argument unnamed", prm(`{"name":"p","arguments":[{}]}`), []string{"arguments[0]: name"}},
		{"too many prompts", prm(strings.Join(many, ",")), []string{"prompts: 1025 entries, over the limit of 1024"}},
		{"nothing at all", `{"abi":1,"resources":[]}`, []string{"no tools"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := abi.ParseManifest([]byte(tt.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseListing(t *testing.T) {
	l, err := abi.ParseListing([]byte(`{"resources":[{"uri":"memo://a","name":"a"}],"prompts":[{"name":"p"}]}`))
	if err != nil || len(l.Resources) != 1 || len(l.Prompts) != 1 || l.Empty() {
		t.Fatalf("ParseListing = %+v, %v", l, err)
	}
	for doc, want := range map[string]string{
		`[]`:                                     "not a JSON object",
		`{"resources":[{"uri":"a","name":"a"}]}`: "listing: resources[0]: uri",
		`{"prompts":[{"name":"p"},{"name":"p"}]}`: `listing: prompt "p" is declared twice`,
		`{} {}`:                               "trailing data",
		"{\"prompts\":[{\"name\":\"\xff\"}]}": "not valid UTF-8",
	} {
		if _, err := abi.ParseListing([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseListing(%s) = %v, want an error with %q", doc, err, want)
		}
	}
}
