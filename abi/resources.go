package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Resources and prompts a module offers beside its tools (optional
// manifest fields of ABI version 1). The listings use MCP's own shapes and
// field names (uri, uriTemplate, mimeType), as icons do, so that a listing
// reaches clients as written. Reads and gets run through toolhost_call
// under reserved call names, which no tool name can take (they hold '/'):
//
//	toolhost_call("resources/read", {"uri": "notes://a"})
//	    -> {"result": {"contents": [{"uri": "notes://a", "mimeType": "text/plain", "text": "…"}]}}
//	toolhost_call("prompts/get", {"name": "review", "arguments": {"lang": "go"}})
//	    -> {"result": {"description": "…", "messages": [{"role": "user", "content": {"type": "text", "text": "…"}}]}}
//
// A module whose manifest says "dynamic_offers": true is also called, once
// it is loaded, for more of them (the arguments are {}); the result has the
// manifest's own fields:
//
//	toolhost_call("offers/list", {})
//	    -> {"result": {"resources": [...], "resource_templates": [...], "prompts": [...]}}
const (
	// CallReadResource is the call name of a resources/read.
	CallReadResource = "resources/read"
	// CallGetPrompt is the call name of a prompts/get.
	CallGetPrompt = "prompts/get"
	// CallListOffers is the call name of a dynamic listing.
	CallListOffers = "offers/list"
)

// Bounds on what a manifest may offer: a listing larger than these is a
// mistake (or an attack on every client that lists it), refused at load.
const (
	// MaxOffers bounds each of resources, resource_templates and prompts.
	MaxOffers = 1024
	// MaxURILen bounds a resource URI or URI template, in bytes.
	MaxURILen = 2048
	// MaxOfferText bounds a name, title or description, in bytes.
	MaxOfferText = 8192
	// MaxPromptArguments bounds a prompt's arguments.
	MaxPromptArguments = 64
)

// Resource is a resource a module offers (MCP Resource). Its URI is its
// identity: unique across the plugins folder, matched by access rules.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the raw content's size in bytes, if known.
	Size  *int64 `json:"size,omitempty"`
	Icons []Icon `json:"icons,omitempty"`
}

// ResourceTemplate is a family of resources a module can read (MCP
// ResourceTemplate): an RFC 6570 URI template such as "notes://{name}".
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
}

// Prompt is a prompt a module offers (MCP Prompt). Its name follows the
// rules of tool names and is unique across the plugins folder.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
}

// PromptArgument is one argument a prompt takes (a string).
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ReadResourceArgs are the arguments of a CallReadResource call.
type ReadResourceArgs struct {
	URI string `json:"uri"`
}

// GetPromptArgs are the arguments of a CallGetPrompt call.
type GetPromptArgs struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
}

// ResourceContents is one item of a read's result: text or blob (base64).
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ReadResourceResult is the result of a CallReadResource call.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptMessage is one message of a prompt: role "user" or "assistant",
// content an MCP content block (e.g. {"type": "text", "text": "…"}).
type PromptMessage struct {
	Role    string         `json:"role"`
	Content map[string]any `json:"content"`
}

// GetPromptResult is the result of a CallGetPrompt call.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// Listing is what a module offers beside its tools: in its manifest, and
// as the result of a CallListOffers call.
type Listing struct {
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resource_templates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
}

// Empty reports whether the listing offers nothing.
func (l *Listing) Empty() bool {
	return len(l.Resources) == 0 && len(l.ResourceTemplates) == 0 && len(l.Prompts) == 0
}

// Offers reports whether the module offers resources or prompts (in its
// manifest, or dynamically), so that the host may send it the reserved
// calls.
func (m *Manifest) Offers() bool { return !m.Listing.Empty() || m.DynamicOffers }

// ParseListing decodes and checks the result of a CallListOffers call as
// ParseManifest checks a manifest's listing.
func ParseListing(b []byte) (*Listing, error) {
	if !utf8.Valid(b) {
		return nil, contractErrorf("listing", "not valid UTF-8")
	}
	var l Listing
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&l); err != nil {
		return nil, contractErrorf("listing", "not a JSON object of resources, resource_templates and prompts: %v", err)
	}
	if !atEOF(dec) {
		return nil, contractErrorf("listing", "trailing data after the JSON object")
	}
	if err := l.check("listing"); err != nil {
		return nil, err
	}
	return &l, nil
}

// check checks the listing's resources, templates and prompts: bounded
// counts and sizes, absolute URIs, well-formed templates, prompt names as
// tool names, nothing declared twice.
func (m *Listing) check(what string) error {
	for what, n := range map[string]int{"resources": len(m.Resources), "resource_templates": len(m.ResourceTemplates), "prompts": len(m.Prompts)} {
		if n > MaxOffers {
			return contractErrorf(what, "%s: %d entries, over the limit of %d", what, n, MaxOffers)
		}
	}
	uris := map[string]bool{}
	for i, r := range m.Resources {
		if err := checkURI(r.URI); err != nil {
			return contractErrorf(what, "resources[%d]: uri %v", i, err)
		}
		if uris[r.URI] {
			return contractErrorf(what, "resource %q is declared twice", r.URI)
		}
		uris[r.URI] = true
		if err := checkOfferText(r.Name, r.Title, r.Description, r.MIMEType, r.Icons); err != nil {
			return contractErrorf(what, "resource %q: %v", r.URI, err)
		}
		if r.Size != nil && *r.Size < 0 {
			return contractErrorf(what, "resource %q: size must be >= 0", r.URI)
		}
	}
	templates := map[string]bool{}
	for i, t := range m.ResourceTemplates {
		if err := CheckURITemplate(t.URITemplate); err != nil {
			return contractErrorf(what, "resource_templates[%d]: uriTemplate %v", i, err)
		}
		if templates[t.URITemplate] {
			return contractErrorf(what, "resource template %q is declared twice", t.URITemplate)
		}
		templates[t.URITemplate] = true
		if err := checkOfferText(t.Name, t.Title, t.Description, t.MIMEType, t.Icons); err != nil {
			return contractErrorf(what, "resource template %q: %v", t.URITemplate, err)
		}
	}
	prompts := map[string]bool{}
	for i, p := range m.Prompts {
		if !ValidToolName(p.Name) {
			return contractErrorf(what, "prompts[%d]: name %q does not match ^[A-Za-z0-9_.-]{1,128}$", i, p.Name)
		}
		if prompts[p.Name] {
			return contractErrorf(what, "prompt %q is declared twice", p.Name)
		}
		prompts[p.Name] = true
		if err := checkOfferText(p.Name, p.Title, p.Description, "", p.Icons); err != nil {
			return contractErrorf(what, "prompt %q: %v", p.Name, err)
		}
		if err := checkArguments(p.Arguments); err != nil {
			return contractErrorf(what, "prompt %q: %v", p.Name, err)
		}
	}
	return nil
}

func checkArguments(args []PromptArgument) error {
	if len(args) > MaxPromptArguments {
		return fmt.Errorf("%d arguments, over the limit of %d", len(args), MaxPromptArguments)
	}
	seen := map[string]bool{}
	for j, a := range args {
		if a.Name == "" || !printable(a.Name) || len(a.Name) > MaxToolNameLen {
			return fmt.Errorf("arguments[%d]: name %q must be 1 to %d printable bytes", j, truncate(a.Name, 40), MaxToolNameLen)
		}
		if seen[a.Name] {
			return fmt.Errorf("argument %q is declared twice", a.Name)
		}
		seen[a.Name] = true
		if len(a.Title) > MaxOfferText || len(a.Description) > MaxOfferText {
			return fmt.Errorf("argument %q: title or description over %d bytes", a.Name, MaxOfferText)
		}
	}
	return nil
}

// checkOfferText bounds the human fields of a listing entry; name is
// required.
func checkOfferText(name, title, description, mimeType string, icons []Icon) error {
	if name == "" {
		return fmt.Errorf("name is empty")
	}
	for field, s := range map[string]string{"name": name, "title": title, "description": description, "mimeType": mimeType} {
		if len(s) > MaxOfferText {
			return fmt.Errorf("%s is %d bytes, over the limit of %d", field, len(s), MaxOfferText)
		}
	}
	if !printable(name) {
		return fmt.Errorf("name %q holds a control character", truncate(name, 40))
	}
	for j, ic := range icons {
		if err := ic.check(); err != nil {
			return fmt.Errorf("icons[%d]: %v", j, err)
		}
	}
	return nil
}

// checkURI accepts an absolute URI (a scheme and more) of at most
// MaxURILen bytes, with no spaces or control characters.
func checkURI(s string) error {
	if err := checkURIText(s); err != nil {
		return err
	}
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || !validScheme(scheme) || rest == "" {
		return fmt.Errorf("%q is not an absolute URI (want a scheme, as in notes://todo or file:///a.txt)", truncate(s, 60))
	}
	if !validEscapes(rest) {
		return fmt.Errorf("%q is not a URI: a %% not followed by two hex digits", truncate(s, 60))
	}
	return nil
}

// validScheme is RFC 3986's scheme: a letter, then letters, digits, '+',
// '-' and '.'. (Not net/url: this package is linked into every Go guest,
// and net/url would run net/netip's init in every instance.)
func validScheme(s string) bool {
	for i, c := range s {
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// validEscapes reports whether every '%' in s starts a %XX escape.
func validEscapes(s string) bool {
	hex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !hex(s[i+1]) || !hex(s[i+2])) {
			return false
		}
	}
	return true
}

// CheckURITemplate accepts an RFC 6570 template whose literal start is an
// absolute URI's scheme, with balanced, non-empty, unnested expressions.
func CheckURITemplate(s string) error {
	if err := checkURIText(s); err != nil {
		return err
	}
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{':
			if depth > 0 {
				return fmt.Errorf("%q nests a '{'", truncate(s, 60))
			}
			depth, start = 1, i
		case '}':
			if depth == 0 {
				return fmt.Errorf("%q has a '}' without its '{'", truncate(s, 60))
			}
			if i == start+1 {
				return fmt.Errorf("%q has an empty expression {}", truncate(s, 60))
			}
			if err := checkExpression(s[start+1 : i]); err != nil {
				return fmt.Errorf("%q: {%s}: %v", truncate(s, 60), s[start+1:i], err)
			}
			depth = 0
		}
	}
	if depth > 0 {
		return fmt.Errorf("%q has a '{' without its '}'", truncate(s, 60))
	}
	head, _, _ := strings.Cut(s, "{")
	scheme, _, ok := strings.Cut(head, ":")
	if !ok || scheme == "" {
		return fmt.Errorf("%q does not start with a scheme (as in notes://{name})", truncate(s, 60))
	}
	if !validScheme(scheme) {
		return fmt.Errorf("%q has an invalid scheme %q", truncate(s, 60), scheme)
	}
	return nil
}

// checkExpression checks one RFC 6570 expression (between the braces):
// an optional operator, then comma-separated variables, each a name of
// letters, digits, '_' and inner '.', with an optional ":length" (1 to
// 9999) or "*".
func checkExpression(e string) error {
	if strings.ContainsAny(e[:1], "+#./;?&") {
		e = e[1:]
	}
	for _, v := range strings.Split(e, ",") {
		name, mod := v, ""
		if i := strings.IndexAny(v, ":*"); i >= 0 {
			name, mod = v[:i], v[i:]
		}
		if name == "" || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
			return fmt.Errorf("variable %q is not a name", v)
		}
		for _, c := range name {
			if !(c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				return fmt.Errorf("variable %q holds %q (letters, digits, '_' and '.' only)", v, c)
			}
		}
		switch {
		case mod == "" || mod == "*":
		case mod[0] == ':' && len(mod) >= 2 && len(mod) <= 5 && mod[1] != '0' && strings.Trim(mod[1:], "0123456789") == "":
		default:
			return fmt.Errorf("variable %q has a modifier that is not :1 to :9999 or *", v)
		}
	}
	return nil
}

func checkURIText(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("is empty")
	case len(s) > MaxURILen:
		return fmt.Errorf("is %d bytes, over the limit of %d", len(s), MaxURILen)
	case !utf8.ValidString(s):
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, c := range s {
		if c == ' ' || unicode.IsControl(c) {
			return fmt.Errorf("%q holds a space or a control character", truncate(s, 60))
		}
	}
	return nil
}

func printable(s string) bool {
	for _, c := range s {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}
