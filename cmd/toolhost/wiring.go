package main

import (
	"cmp"
	"maps"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/loader"
)

// The config file's settings for the layers that are no leaves of package
// config (it fills only leaf types): the dispatcher and the loader.

// dispatcherConfig returns base with the file's settings applied:
// Concurrency, GlobalConcurrency, QueueTimeout, IdempotencyTTL and Breaker
// where the file sets them, and a Tools policy (Concurrency, MaxTimeout
// and Breaker, field by field) for every tool whose section sets any of
// them. base.Tools is copied, not modified. A nil Config returns base.
func dispatcherConfig(c *config.Config, base dispatcher.Config) dispatcher.Config {
	if c == nil {
		return base
	}
	out := base
	d := c.Dispatch
	out.Concurrency = cmp.Or(d.Concurrency, out.Concurrency)
	out.GlobalConcurrency = cmp.Or(d.GlobalConcurrency, out.GlobalConcurrency)
	out.QueueTimeout = cmp.Or(d.QueueTimeout, out.QueueTimeout)
	out.IdempotencyTTL = cmp.Or(d.IdempotencyTTL, out.IdempotencyTTL)
	out.Breaker = overlayBreaker(base.Breaker, c.Breaker)
	var tools map[string]dispatcher.ToolPolicy
	for name, t := range c.Tools {
		if t.Concurrency == 0 && t.MaxTimeout == 0 && t.Breaker == (breaker.Settings{}) {
			continue
		}
		if tools == nil {
			tools = maps.Clone(base.Tools)
			if tools == nil {
				tools = make(map[string]dispatcher.ToolPolicy)
			}
		}
		p := tools[name]
		p.Concurrency = cmp.Or(t.Concurrency, p.Concurrency)
		p.MaxTimeout = cmp.Or(t.MaxTimeout, p.MaxTimeout)
		p.Breaker = overlayBreaker(p.Breaker, t.Breaker)
		tools[name] = p
	}
	if tools != nil {
		out.Tools = tools
	}
	return out
}

// overlayBreaker returns base with the fields the file set (its non-zero
// ones: the checker writes jitter = 0 as -1) in place of its own.
func overlayBreaker(base, file breaker.Settings) breaker.Settings {
	return breaker.Settings{
		Failures:    cmp.Or(file.Failures, base.Failures),
		FailureRate: cmp.Or(file.FailureRate, base.FailureRate),
		MinCalls:    cmp.Or(file.MinCalls, base.MinCalls),
		Window:      cmp.Or(file.Window, base.Window),
		Cooldown:    cmp.Or(file.Cooldown, base.Cooldown),
		Jitter:      cmp.Or(file.Jitter, base.Jitter),
		Probes:      cmp.Or(file.Probes, base.Probes),
	}
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
