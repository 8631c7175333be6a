package loader

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/registry"
)

// wireName is the name rec goes by on the wire: the operator's name for
// the tool if the config gives one, else the module's prefix (if any)
// before the manifest name, made client-safe unless opts.ExactNames.
func wireName(rec *registry.Tool, opts Options) string {
	if o := opts.Overrides[rec.Name]; o.WireName != "" {
		return o.WireName
	}
	prefix := opts.Prefixes[filepath.Base(rec.Module.Path)]
	if opts.ExactNames {
		return prefix + rec.Name
	}
	return registry.WireName(prefix, rec.Name)
}

// checkWireName refuses a wire name clients could not use or that falls in
// toolhost's own namespace. Clashes between tools are the registry's to
// find.
func checkWireName(rec *registry.Tool, opts Options) error {
	if rec.Hidden {
		return nil // never on the wire
	}
	w := rec.WireName
	if strings.HasPrefix(w, ReservedWirePrefix) || strings.HasPrefix(w, ReservedPrefix) {
		return fmt.Errorf("tool %q: its wire name %q starts with %q, reserved for toolhost's built-in tools; give it another in the config ([tools.%q] name = \"…\")",
			rec.Name, w, ReservedWirePrefix, rec.Name)
	}
	if opts.ExactNames && opts.Overrides[rec.Name].WireName == "" {
		// What the MCP SDK accepts: a prefix may make a long name longer.
		if !abi.ValidToolName(w) {
			return fmt.Errorf("tool %q: its wire name %q is longer than %d characters", rec.Name, w, abi.MaxToolNameLen)
		}
		return nil
	}
	if !registry.ValidWireName(w) {
		return fmt.Errorf("tool %q: its wire name %q does not match ^[a-zA-Z0-9_-]{1,64}$", rec.Name, w)
	}
	return nil
}
