package server

import (
	"maps"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/loader"
)

// The config file's settings for the layers whose own types it does not
// fill whole: the dispatcher's per-tool policies and the loader's
// overrides, which share one [tools."NAME"] section.

// dispatcherConfig is the dispatcher's config as the file gives it: the
// [dispatch] keys (which the checker writes into the dispatcher's own
// Config), [breaker], and a Tools policy (Concurrency, MaxTimeout and
// Breaker) for every tool whose section sets any of them. A nil Config
// gives the zero Config: every default.
func dispatcherConfig(c *config.Config) dispatcher.Config {
	if c == nil {
		return dispatcher.Config{}
	}
	out := c.Dispatch.Config
	out.Breaker = c.Breaker
	out.Tools = maps.Clone(out.Tools)
	for name, t := range c.Tools {
		if t.Concurrency == 0 && t.MaxTimeout == 0 && t.Breaker == (breaker.Settings{}) {
			continue
		}
		if out.Tools == nil {
			out.Tools = make(map[string]dispatcher.ToolPolicy)
		}
		out.Tools[name] = dispatcher.ToolPolicy{Concurrency: t.Concurrency, MaxTimeout: t.MaxTimeout, Breaker: t.Breaker}
	}
	return out
}

// toolOverrides returns one loader.Override per [tools."NAME"] section:
// timeout, idempotent, read_only, the tool's limits and its view (expose,
// name, description), for loader.Options.Overrides. Unset fields are zero
// (the manifest's value or the runtime's limits apply). A nil Config
// returns nil.
func toolOverrides(c *config.Config) map[string]loader.Override {
	if c == nil {
		return nil
	}
	out := make(map[string]loader.Override, len(c.Tools))
	for name, t := range c.Tools {
		out[name] = loader.Override{
			Timeout:    t.Timeout,
			Idempotent: clonePtr(t.Idempotent),
			ReadOnly:   clonePtr(t.ReadOnly),
			Limits:     t.Limits,

			Expose:      clonePtr(t.View.Expose),
			WireName:    t.View.Name,
			Description: t.View.Description,
			Reuse:       clonePtr(t.Reuse),
		}
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
