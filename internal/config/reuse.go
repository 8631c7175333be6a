package config

import (
	"github.com/toolhost/toolhost/internal/hostconf"
)

// MinReuseMemoryMark is the smallest memory_high_water accepted: one
// WebAssembly page.
const MinReuseMemoryMark = 64 << 10

// reuseSection checks the [reuse] section into hostconf.Reuse: the bounds of
// warm instances, for the tools whose manifests allow them. A tool or
// module turns reuse off with reuse = false in its [tools."NAME"] or
// [modules."MODULE.wasm"] section.
func (p *checker) reuseSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[reuse]")
	if t == nil {
		return
	}
	r := &c.Reuse
	p.fields(path, t,
		field{"max_per_tool", func(path []string, v any) { p.count(path, v, &r.MaxPerTool) }},
		field{"max_total", func(path []string, v any) { p.count(path, v, &r.MaxTotal) }},
		field{"max_uses", func(path []string, v any) { p.count(path, v, &r.MaxUses) }},
		field{"idle_timeout", func(path []string, v any) { p.duration(path, v, &r.IdleTimeout) }},
		field{"memory_high_water", func(path []string, v any) {
			if n, ok := p.size(path, v, MinReuseMemoryMark, MaxMemory,
				"below one 64 KiB page", "above the 4 GiB maximum (WebAssembly memory is 32-bit)"); ok {
				r.MemoryHighWater = n
			}
		}},
	)
}

// HostReuse returns the [reuse] section for host.Config.Reuse. Zero fields
// were not set (the host's defaults apply). A nil Config returns the zero
// value.
func (c *Config) HostReuse() hostconf.Reuse {
	if c == nil {
		return hostconf.Reuse{}
	}
	return c.Reuse
}

// ModuleReuse returns the [modules."MODULE.wasm"] reuse flags by module
// file name, for loader.Options.Reuse. A nil Config returns nil.
func (c *Config) ModuleReuse() map[string]bool {
	if c == nil {
		return nil
	}
	var out map[string]bool
	for name, m := range c.Modules {
		if m.Reuse != nil {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = *m.Reuse
		}
	}
	return out
}
