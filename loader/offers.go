package loader

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/registry"
)

// offersOf binds the resources, resource templates and prompts of m's
// manifest to handlers that run their reads and gets as calls of m under
// the reserved names (abi.CallReadResource, abi.CallGetPrompt): the same
// path as a tool's call, fresh instance, limits and all.
func offersOf(m *host.Module, ref *moduleRef) registry.Offers {
	if m.Manifest == nil {
		return registry.Offers{}
	}
	return bindListing(m, ref, &m.Manifest.Listing)
}

// offerTimeout bounds one read, get or listing of m: its manifest's
// top-level timeout_ms, else the ABI default.
func offerTimeout(m *host.Module) time.Duration {
	if m.Manifest != nil && m.Manifest.TimeoutMS != nil {
		return time.Duration(*m.Manifest.TimeoutMS) * time.Millisecond
	}
	return time.Duration(abi.DefaultTimeoutMS) * time.Millisecond
}

// bindListing binds man's entries to m (see offersOf).
func bindListing(m *host.Module, ref *moduleRef, man *abi.Listing) registry.Offers {
	var o registry.Offers
	lim := m.EffectiveLimits(host.Limits{})
	timeout := offerTimeout(m)
	at := func(call string) registry.Offering {
		return registry.Offering{Module: registry.Module{Path: m.Path, SHA256: m.SHA256}, Timeout: timeout,
			Handler: &boundOffer{mod: m, ref: ref, call: call, lim: lim}}
	}
	for _, r := range man.Resources {
		o.Resources = append(o.Resources, &registry.Resource{Resource: r, Offering: at(abi.CallReadResource)})
	}
	for _, t := range man.ResourceTemplates {
		o.Templates = append(o.Templates, &registry.ResourceTemplate{ResourceTemplate: t, Offering: at(abi.CallReadResource)})
	}
	for _, p := range man.Prompts {
		o.Prompts = append(o.Prompts, &registry.Prompt{Prompt: p, Offering: at(abi.CallGetPrompt)})
	}
	return o
}

// offerNames are the identities of o, each kind apart: what must be
// unique across the plugins folder.
func offerNames(o registry.Offers) map[string]string {
	names := map[string]string{}
	for _, r := range o.Resources {
		names["resource "+r.URI] = fmt.Sprintf("resource %q", r.URI)
	}
	for _, t := range o.Templates {
		names["template "+t.URITemplate] = fmt.Sprintf("resource template %q", t.URITemplate)
	}
	for _, p := range o.Prompts {
		names["prompt "+p.Name] = fmt.Sprintf("prompt %q", p.Name)
	}
	return names
}

// offerClash says which file in next already offers one of o's URIs,
// URI templates or prompt names, and the reason to refuse path for it.
func offerClash(o registry.Offers, path string, next map[string]*liveFile) (other, reason string) {
	mine := offerNames(o)
	if len(mine) == 0 {
		return "", ""
	}
	for _, other := range slices.Sorted(maps.Keys(next)) {
		if other == path {
			continue
		}
		theirs := offerNames(next[other].offers)
		for _, k := range slices.Sorted(maps.Keys(mine)) {
			if _, ok := theirs[k]; ok {
				return other, fmt.Sprintf("%s is also declared by %s; resource URIs, resource templates and prompt names must be unique across the plugins folder", mine[k], other)
			}
		}
	}
	return "", ""
}

// mergeOffers is the offers of every file in next.
func mergeOffers(next map[string]*liveFile) registry.Offers {
	var o registry.Offers
	for _, f := range next {
		o.Resources = append(o.Resources, f.offers.Resources...)
		o.Templates = append(o.Templates, f.offers.Templates...)
		o.Prompts = append(o.Prompts, f.offers.Prompts...)
	}
	return o
}

// boundOffer runs one kind of reserved call on a module version. Unlike a
// tool's call it does not chase a newer version when a reload retired its
// own: a resource's or prompt's owner may have changed, so the caller
// looks it up again.
type boundOffer struct {
	mod  *host.Module
	ref  *moduleRef // nil outside a Live folder
	call string
	lim  host.Limits
}

// Handle runs the call for the anonymous caller.
func (b *boundOffer) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return b.HandleRequest(ctx, registry.Request{Args: args})
}

// HandleRequest runs the call in a fresh instance of the module.
func (b *boundOffer) HandleRequest(ctx context.Context, req registry.Request) (json.RawMessage, error) {
	release, err := b.acquire()
	if err != nil {
		return nil, err
	}
	defer release()
	return b.mod.Do(ctx, b.request(req))
}

// Prepare waits for the module's code and an admission slot under the
// caller's context, as a tool's Prepare does.
func (b *boundOffer) Prepare(ctx context.Context, req registry.Request) (context.Context, func(), error) {
	release, err := b.acquire()
	if err != nil {
		return nil, nil, err
	}
	pctx, done, err := b.mod.Prepare(ctx, b.request(req))
	if err != nil {
		release()
		return nil, nil, err
	}
	return pctx, func() { done(); release() }, nil
}

func (b *boundOffer) request(req registry.Request) host.Request {
	return host.Request{Tool: b.call, Args: req.Args, Limits: b.lim, Caller: req.Caller}
}

func (b *boundOffer) acquire() (func(), error) {
	if b.ref == nil {
		return func() {}, nil
	}
	if !b.ref.acquire() {
		return nil, &abi.Error{Kind: abi.KindTransient, Message: fmt.Sprintf("the module %s was replaced as the request started; ask again", b.mod.Path)}
	}
	return b.ref.release, nil
}
