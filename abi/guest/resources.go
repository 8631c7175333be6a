package guest

import (
	"fmt"
	"strings"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// ReadFunc reads the resource at uri: one or more contents, each text or
// blob (base64), usually with uri itself as its URI.
type ReadFunc func(uri string) ([]abi.ResourceContents, error)

// PromptFunc fills a prompt in from its arguments.
type PromptFunc func(args map[string]string) (abi.GetPromptResult, error)

type resource struct {
	spec abi.Resource
	read ReadFunc
}

type template struct {
	spec abi.ResourceTemplate
	read ReadFunc
}

type prompt struct {
	spec abi.Prompt
	get  PromptFunc
}

var (
	resources []resource
	templates []template
	prompts   []prompt
)

// moduleTimeoutMS is the manifest's top-level timeout_ms (SetTimeout).
var moduleTimeoutMS int

// SetTimeout sets the module's default timeout (the manifest's top-level
// timeout_ms): the timeout of each tool that sets none, and of each
// resource read and prompt get, which have no timeout of their own. 0
// means the ABI default (30 s).
func SetTimeout(ms int) {
	moduleTimeoutMS = ms
	manifest = nil
}

// Dynamic is what a module lists by code rather than in its manifest: the
// host calls List once the module is loaded (and again after each reload
// of it), and routes the reads and gets of what it listed to Read and Get.
// An instance keeps nothing between calls, so List sees what every call
// sees: the module's code and data, the clock, and egress if granted.
type Dynamic struct {
	List func() (abi.Listing, error)
	// Read reads a resource List listed, or one its templates match.
	Read ReadFunc
	// Get fills in a prompt List listed.
	Get func(name string, args map[string]string) (abi.GetPromptResult, error)
}

var dynamic *Dynamic

// SetDynamic declares the module's dynamic offers ("dynamic_offers": true
// in its manifest).
func SetDynamic(d Dynamic) {
	dynamic = &d
	manifest = nil
}

// RegisterResource offers the resource r (listed in the manifest), read by
// read. It panics on a URI registered twice.
func RegisterResource(r abi.Resource, read ReadFunc) {
	for _, x := range resources {
		if x.spec.URI == r.URI {
			panic(fmt.Sprintf("guest.RegisterResource: resource %q registered twice", r.URI))
		}
	}
	resources = append(resources, resource{r, read})
	manifest = nil
}

// RegisterResourceTemplate offers the resources whose URIs t's template
// matches (an RFC 6570 template such as "notes://{name}"; here each
// expression matches a run of characters without '/', or with them for
// {+name} and {/name}), read by read. It panics on a template registered
// twice.
func RegisterResourceTemplate(t abi.ResourceTemplate, read ReadFunc) {
	for _, x := range templates {
		if x.spec.URITemplate == t.URITemplate {
			panic(fmt.Sprintf("guest.RegisterResourceTemplate: template %q registered twice", t.URITemplate))
		}
	}
	templates = append(templates, template{t, read})
	manifest = nil
}

// RegisterPrompt offers the prompt p, filled in by get. It panics on an
// invalid or duplicate name.
func RegisterPrompt(p abi.Prompt, get PromptFunc) {
	if !abi.ValidToolName(p.Name) {
		panic(fmt.Sprintf("guest.RegisterPrompt: invalid prompt name %q", p.Name))
	}
	for _, x := range prompts {
		if x.spec.Name == p.Name {
			panic(fmt.Sprintf("guest.RegisterPrompt: prompt %q registered twice", p.Name))
		}
	}
	prompts = append(prompts, prompt{p, get})
	manifest = nil
}

// offerSpecs fills the manifest's resources, templates and prompts.
func offerSpecs(m *abi.Manifest) {
	if moduleTimeoutMS > 0 {
		m.TimeoutMS = &moduleTimeoutMS
	}
	m.DynamicOffers = dynamic != nil
	for _, r := range resources {
		m.Resources = append(m.Resources, r.spec)
	}
	for _, t := range templates {
		m.ResourceTemplates = append(m.ResourceTemplates, t.spec)
	}
	for _, p := range prompts {
		m.Prompts = append(m.Prompts, p.spec)
	}
}

// dispatchOffer serves the reserved calls; ok is false for any other name.
func dispatchOffer(name string, args []byte) (result any, ok bool, err error) {
	switch name {
	case abi.CallReadResource:
		var a abi.ReadResourceArgs
		if err := decodeArgs(args, &a); err != nil {
			return nil, true, err
		}
		read := findReader(a.URI)
		if read == nil && dynamic != nil && dynamic.Read != nil {
			read = dynamic.Read
		}
		if read == nil {
			return nil, true, Schemaf("this module has no resource %q", a.URI)
		}
		contents, err := read(a.URI)
		if err != nil {
			return nil, true, err
		}
		return abi.ReadResourceResult{Contents: contents}, true, nil
	case abi.CallGetPrompt:
		var a abi.GetPromptArgs
		if err := decodeArgs(args, &a); err != nil {
			return nil, true, err
		}
		for _, p := range prompts {
			if p.spec.Name == a.Name {
				if a.Arguments == nil {
					a.Arguments = map[string]string{}
				}
				res, err := p.get(a.Arguments)
				if res.Messages == nil {
					res.Messages = []abi.PromptMessage{}
				}
				return res, true, err
			}
		}
		if dynamic != nil && dynamic.Get != nil {
			if a.Arguments == nil {
				a.Arguments = map[string]string{}
			}
			res, err := dynamic.Get(a.Name, a.Arguments)
			if res.Messages == nil {
				res.Messages = []abi.PromptMessage{}
			}
			return res, true, err
		}
		return nil, true, Schemaf("this module has no prompt %q", a.Name)
	case abi.CallListOffers:
		if dynamic == nil || dynamic.List == nil {
			return abi.Listing{}, true, nil
		}
		l, err := dynamic.List()
		return l, true, err
	}
	return nil, false, nil
}

func findReader(uri string) ReadFunc {
	for _, r := range resources {
		if r.spec.URI == uri {
			return r.read
		}
	}
	for _, t := range templates {
		if matchTemplate(t.spec.URITemplate, uri) {
			return t.read
		}
	}
	return nil
}

// matchTemplate reports whether uri is one of tmpl's URIs: literals match
// themselves, an expression a run of characters ('/' only in {+x} and
// {/x}).
func matchTemplate(tmpl, uri string) bool {
	if tmpl == "" {
		return uri == ""
	}
	open := strings.IndexByte(tmpl, '{')
	if open < 0 {
		return tmpl == uri
	}
	if !strings.HasPrefix(uri, tmpl[:open]) {
		return false
	}
	end := strings.IndexByte(tmpl[open:], '}')
	if end < 0 {
		return false
	}
	expr, rest := tmpl[open+1:open+end], tmpl[open+end+1:]
	slash := strings.HasPrefix(expr, "+") || strings.HasPrefix(expr, "/") || strings.HasPrefix(expr, "#")
	tail := uri[open:]
	for i := len(tail); i >= 0; i-- {
		if !slash && strings.Contains(tail[:i], "/") {
			continue
		}
		if matchTemplate(rest, tail[i:]) {
			return true
		}
	}
	return false
}
