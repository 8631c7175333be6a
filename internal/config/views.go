package config

import (
	"maps"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/registry"
)

// View is the operator's view of one tool on the wire, the view keys of a
// [tools."NAME"] section. The tool keeps its manifest name as its identity;
// the view changes only what MCP clients see.
type View struct {
	// Expose (expose) false hides the tool from tools/list and makes a
	// tools/call of it not_found. Nil means exposed.
	Expose *bool
	// Name (name) is the name clients see, instead of the client-safe
	// form of the manifest name; it matches ^[a-zA-Z0-9_-]{1,64}$.
	Name string
	// Description (description) replaces the manifest's description.
	Description string
}

// Module is a [modules."MODULE.wasm"] section: the operator's word on all
// the tools of one module file.
type Module struct {
	// Prefix (prefix) goes before the wire name of each of the module's
	// tools ("gh_" makes search gh_search), for two modules that use the
	// same names. It matches ^[a-zA-Z0-9_-]{1,32}$.
	Prefix string
	// Reuse (reuse) false keeps every tool of the module in fresh
	// instances; a tool's own reuse key wins over it (see reuse.go).
	Reuse *bool
	// Snapshot (snapshot) true starts the module's instances from a
	// snapshot of its state after _initialize instead of running it
	// (host.Config.Snapshot): cheaper fresh calls, the same randomness in
	// every instance. Read at start; a reload does not change it.
	Snapshot *bool
	// ExtismConfig ([modules."MODULE.wasm".extism_config]) is an Extism
	// plugin's config, what its config_get reads: string values, or
	// secrets by reference ({env = "NAME"}, {file = "PATH"}).
	ExtismConfig map[string]Secret
	// Keyring ([modules."MODULE.wasm".keyring."SERVICE"] USER = {env =
	// "NAME"}) is what an Extism plugin's hyper-mcp get_keyring_secret
	// reads, by the entry's service, then its user: references only
	// (keyring.go).
	Keyring map[string]map[string]Secret
}

// ExtismConfig returns each module's [modules."MODULE.wasm".extism_config]
// with its secrets' values (after ResolveSecrets), for
// host.Config.ExtismConfig. A nil Config returns nil.
func (c *Config) ExtismConfig() map[string]map[string]string {
	if c == nil {
		return nil
	}
	var out map[string]map[string]string
	for name, m := range c.Modules {
		if len(m.ExtismConfig) == 0 {
			continue
		}
		if out == nil {
			out = make(map[string]map[string]string)
		}
		kv := make(map[string]string, len(m.ExtismConfig))
		for k, s := range m.ExtismConfig {
			kv[k] = s.Value()
		}
		out[name] = kv
	}
	return out
}

// ModuleSnapshot returns the modules, by file name, whose
// [modules."MODULE.wasm"] section says snapshot = true, for
// host.Config.Snapshot. A nil Config returns nil.
func (c *Config) ModuleSnapshot() map[string]bool {
	if c == nil {
		return nil
	}
	var out map[string]bool
	for name, m := range c.Modules {
		if m.Snapshot != nil && *m.Snapshot {
			if out == nil {
				out = map[string]bool{}
			}
			out[name] = true
		}
	}
	return out
}

// MaxPrefixLen bounds a module prefix, so that a prefixed wire name keeps
// some of the tool's own name within 64 characters.
const MaxPrefixLen = 32

// Prefixes returns the [modules."MODULE.wasm"] prefixes by module file
// name, for loader.Options.Prefixes. A nil Config returns nil.
func (c *Config) Prefixes() map[string]string {
	if c == nil || len(c.Modules) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.Modules))
	for name, m := range c.Modules {
		if m.Prefix != "" {
			out[name] = m.Prefix
		}
	}
	return out
}

// viewFields are the view keys of a [tools."NAME"] section.
func (p *checker) viewFields(v *View) []field {
	return []field{
		{"expose", func(path []string, x any) { p.flag(path, x, &v.Expose) }},
		{"name", func(path []string, x any) {
			s, ok := x.(string)
			switch {
			case !ok:
				p.fail(path, "must be a string (the tool's name on the wire), not %s", describe(x))
			case !registry.ValidWireName(s):
				p.fail(path, "%q is not a name every MCP client accepts: it must match ^[a-zA-Z0-9_-]{1,64}$ (try %q)",
					truncate(s), registry.SafeName(s))
			case strings.HasPrefix(s, "toolhost_"):
				p.fail(path, "%q starts with \"toolhost_\", reserved for toolhost's built-in tools", s)
			default:
				v.Name = s
			}
		}},
		{"description", func(path []string, x any) {
			s, ok := x.(string)
			switch {
			case !ok:
				p.fail(path, "must be a string, not %s", describe(x))
			case strings.TrimSpace(s) == "":
				p.fail(path, "must not be empty (leave the key out to keep the manifest's description)")
			default:
				v.Description = s
			}
		}},
	}
}

// uniqueViewNames refuses two tools given one wire name: the later
// section, in file order, is the one reported.
func (p *checker) uniqueViewNames(c *Config) {
	type named struct{ tool, key string }
	var all []named
	for _, tool := range slices.Sorted(maps.Keys(c.Tools)) {
		if n := c.Tools[tool].View.Name; n != "" {
			all = append(all, named{tool, keyString([]string{"tools", tool, "name"})})
		}
	}
	slices.SortStableFunc(all, func(a, b named) int { return p.keys[a.key].off - p.keys[b.key].off })
	seen := map[string]string{}
	for _, n := range all {
		wire := c.Tools[n.tool].View.Name
		if first, ok := seen[wire]; ok {
			p.fail([]string{"tools", n.tool, "name"}, "%q is already the name of tool %q (%s); two tools cannot share a wire name",
				wire, first, keyString([]string{"tools", first, "name"}))
			continue
		}
		seen[wire] = n.tool
	}
}

// modulesSection checks the [modules."MODULE.wasm"] sections.
func (p *checker) modulesSection(path []string, v any, c *Config) {
	t := p.table(path, v, `[modules."MODULE.wasm"] sections`)
	for _, module := range slices.Sorted(maps.Keys(t)) {
		mp := concat(path, []string{module})
		if !strings.HasSuffix(module, ".wasm") || strings.ContainsAny(module, `/\`) {
			p.fail(mp, "%q is not a module file name: modules are keyed by the .wasm file's name in the plugins folder, as in [modules.\"github.wasm\"]", truncate(module))
			continue
		}
		mt := p.table(mp, t[module], "["+keyString(mp)+"]")
		if mt == nil {
			continue
		}
		var m Module
		p.fields(mp, mt, field{"prefix", func(path []string, x any) {
			s, ok := x.(string)
			switch {
			case !ok:
				p.fail(path, "must be a string such as \"gh_\", not %s", describe(x))
			case len(s) > MaxPrefixLen || !registry.ValidWireName(s):
				p.fail(path, "%q is not a prefix every MCP client accepts: it must match ^[a-zA-Z0-9_-]{1,%d}$", truncate(s), MaxPrefixLen)
			case strings.HasPrefix(s, "toolhost_"):
				p.fail(path, "%q starts with \"toolhost_\", reserved for toolhost's built-in tools", s)
			default:
				m.Prefix = s
			}
		}}, field{"reuse", func(path []string, x any) { p.flag(path, x, &m.Reuse) }},
			field{"snapshot", func(path []string, x any) { p.flag(path, x, &m.Snapshot) }},
			field{"extism_config", func(path []string, x any) {
				kv := p.table(path, x, "["+keyString(path)+"]")
				for _, key := range slices.Sorted(maps.Keys(kv)) {
					s, ok := p.secret(concat(path, []string{key}), kv[key])
					if !ok {
						continue
					}
					if m.ExtismConfig == nil {
						m.ExtismConfig = make(map[string]Secret)
					}
					m.ExtismConfig[key] = s
				}
			}},
			field{"keyring", func(path []string, x any) { m.Keyring = p.keyring(path, x) }})
		if c.Modules == nil {
			c.Modules = make(map[string]Module)
		}
		c.Modules[module] = m
	}
}
