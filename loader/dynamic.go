package loader

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/registry"
)

// Dynamic listings: a module whose manifest says "dynamic_offers" is
// called (abi.CallListOffers) once it serves, off the rescan, and what it
// lists joins its static offers in a swap of their own, so clients hear
// list_changed as of a reload. A guest instance keeps nothing between
// calls, so a listing can change only with the module's code (a reload
// lists again) or what it reads over egress; a listing that must follow
// the world is better a resource template.

// dynamicWait bounds a listing's wait for its module's code and an
// admission slot: a cold Go module compiles in seconds, on a loaded
// machine in tens of them.
const dynamicWait = 5 * time.Minute

// listDynamic starts the dynamic listing of the files this rescan loaded.
// Called with l.mu held.
func (l *Live) listDynamic(ch *Change) {
	for _, p := range ch.Loaded {
		f := l.files[p]
		m, ok := f.ref.mod.(*host.Module)
		if !ok || m.Manifest == nil || !m.Manifest.DynamicOffers {
			continue
		}
		go l.fetchDynamic(p, f.ref, m)
	}
}

// fetchDynamic runs the listing call, as any read of the module runs
// (fresh instance, its limits and timeout), and installs its result.
func (l *Live) fetchDynamic(path string, ref *moduleRef, m *host.Module) {
	h := &boundOffer{mod: m, ref: ref, call: abi.CallListOffers, lim: m.EffectiveLimits(host.Limits{})}
	req := registry.Request{Args: []byte("{}")}
	// Waiting for the code (a lazy module compiles now) and an admission
	// slot is the host's time, bounded apart; the module's timeout is for
	// the listing, as for a read.
	wait, stop := context.WithTimeout(context.Background(), dynamicWait)
	defer stop()
	pctx, done, err := h.Prepare(wait, req)
	var raw []byte
	if err == nil {
		ctx, cancel := context.WithTimeout(pctx, offerTimeout(m))
		raw, err = h.HandleRequest(ctx, req)
		cancel()
		done()
	}
	if err != nil {
		if l.stillServing(path, ref) { // else replaced, removed or closed: nothing to say
			l.logger.Warn("plugin's dynamic listing failed; its static offers serve", "file", path, "err", err)
		}
		return
	}
	listing, err := abi.ParseListing(raw)
	if err != nil {
		l.logger.Warn("plugin's dynamic listing refused; its static offers serve", "file", path, "err", err)
		return
	}
	l.installDynamic(path, ref, bindListing(m, ref, listing))
}

// installDynamic adds extra to the offers of the file at path, if that
// version still serves: an entry its own manifest or another file
// already offers is dropped, with a warning naming both.
func (l *Live) installDynamic(path string, ref *moduleRef, extra registry.Offers) {
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.files[path]
	if l.closed || !ok || f.ref != ref {
		return // replaced or removed meanwhile: its successor lists for itself
	}
	next := maps.Clone(l.files)
	nf := *f
	add := func(one registry.Offers) {
		mine := offerNames(nf.offers)
		for k, what := range offerNames(one) {
			if _, dup := mine[k]; dup {
				l.logger.Warn("plugin's dynamic listing: an entry is dropped", "file", path, "reason", what+" is already offered by the module")
				return
			}
		}
		if other, why := offerClash(one, path, next); why != "" {
			l.logger.Warn("plugin's dynamic listing: an entry is dropped", "file", path, "reason", why, "other", other)
			return
		}
		nf.offers.Resources = append(slices.Clip(nf.offers.Resources), one.Resources...)
		nf.offers.Templates = append(slices.Clip(nf.offers.Templates), one.Templates...)
		nf.offers.Prompts = append(slices.Clip(nf.offers.Prompts), one.Prompts...)
		next[path] = &nf
	}
	for _, r := range extra.Resources {
		add(registry.Offers{Resources: []*registry.Resource{r}})
	}
	for _, t := range extra.Templates {
		add(registry.Offers{Templates: []*registry.ResourceTemplate{t}})
	}
	for _, p := range extra.Prompts {
		add(registry.Offers{Prompts: []*registry.Prompt{p}})
	}
	reg, err := l.cur.Load().WithOffers(mergeOffers(next))
	if err != nil {
		l.logger.Error("plugin's dynamic listing: building the registry failed; keeping the previous offers", "file", path, "err", err)
		return
	}
	l.cur.Store(reg)
	l.files = next
	l.logger.Info("plugin listed dynamic offers", "file", path,
		"resources", len(extra.Resources), "resource_templates", len(extra.Templates), "prompts", len(extra.Prompts))
	for _, f := range l.listeners {
		f(reg)
	}
}

// stillServing reports whether ref is the version of path serving now.
func (l *Live) stillServing(path string, ref *moduleRef) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.files[path]
	return !l.closed && ok && f.ref == ref
}
