package registry

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/toolhost/toolhost/abi"
)

// Offering is what serves one resource, resource template or prompt: the
// module it comes from, the handler that runs its reads or gets (through
// the module's call path, under a reserved call name: abi.CallReadResource,
// abi.CallGetPrompt), and the time one may take.
type Offering struct {
	Module  Module
	Handler Handler
	// Timeout bounds one read or get (the module's timeout_ms).
	Timeout time.Duration
}

// Resource is one resource a module offers.
type Resource struct {
	abi.Resource
	Offering
}

// ResourceTemplate is one resource template a module offers.
type ResourceTemplate struct {
	abi.ResourceTemplate
	Offering
}

// Prompt is one prompt a module offers.
type Prompt struct {
	abi.Prompt
	Offering
}

// Offers are the resources, resource templates and prompts of a folder's
// modules, each sorted by its identity (URI, URI template, name). Built
// once, then read-only.
type Offers struct {
	Resources []*Resource
	Templates []*ResourceTemplate
	Prompts   []*Prompt
}

// Empty reports whether nothing is offered.
func (o Offers) Empty() bool {
	return len(o.Resources) == 0 && len(o.Templates) == 0 && len(o.Prompts) == 0
}

// WithOffers returns a registry with r's tools and o's offers, sorted. It
// fails when a URI, URI template or prompt name appears twice, or an
// offering has no handler. r is not modified.
func (r *Registry) WithOffers(o Offers) (*Registry, error) {
	if err := unique(o.Resources, "resource", func(x *Resource) (string, Handler) { return x.URI, x.Handler }); err != nil {
		return nil, err
	}
	if err := unique(o.Templates, "resource template", func(x *ResourceTemplate) (string, Handler) { return x.URITemplate, x.Handler }); err != nil {
		return nil, err
	}
	if err := unique(o.Prompts, "prompt", func(x *Prompt) (string, Handler) { return x.Name, x.Handler }); err != nil {
		return nil, err
	}
	out := *r
	out.offers = Offers{
		Resources: slices.SortedFunc(slices.Values(o.Resources), func(a, b *Resource) int { return cmp.Compare(a.URI, b.URI) }),
		Templates: slices.SortedFunc(slices.Values(o.Templates), func(a, b *ResourceTemplate) int { return cmp.Compare(a.URITemplate, b.URITemplate) }),
		Prompts:   slices.SortedFunc(slices.Values(o.Prompts), func(a, b *Prompt) int { return cmp.Compare(a.Name, b.Name) }),
	}
	return &out, nil
}

// Offers returns the registry's offers. The slices are shared: do not
// modify them.
func (r *Registry) Offers() Offers { return r.offers }

func unique[T any](xs []T, what string, key func(T) (string, Handler)) error {
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		k, h := key(x)
		if seen[k] {
			return fmt.Errorf("registry: %s %q registered twice", what, k)
		}
		if h == nil {
			return fmt.Errorf("registry: %s %q has no handler", what, k)
		}
		seen[k] = true
	}
	return nil
}
