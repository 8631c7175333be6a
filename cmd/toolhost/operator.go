package main

import (
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/toolhost/toolhost/config"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// operator is what --config gives every command that runs tools (serve,
// plan run): the config, the governor it configures, and the runtime
// settings they imply. Without a file the config is nil, whose every
// method gives the defaults.
type operator struct {
	conf *config.Config
	gov  *governor.Governor
}

// newOperator loads path ("" for none) and starts its governor, publishing
// governor.state on bus (nil for none); shared, if not nil, may give the
// governor a store shared with other replicas, from the config. Close it
// when done.
func newOperator(path string, bus *events.Bus, shared func(*config.Config, governor.Config) (governor.Config, error)) (*operator, error) {
	var conf *config.Config
	if path != "" {
		var err error
		if conf, err = config.Load(path); err != nil {
			return nil, err
		}
		if err = conf.ResolveSecrets(); err != nil {
			return nil, err
		}
	}
	gcfg := conf.GovernorConfig()
	gcfg.Events = bus
	if shared != nil {
		var err error
		if gcfg, err = shared(conf, gcfg); err != nil {
			return nil, err
		}
	}
	gov, err := governor.New(gcfg)
	if err != nil {
		return nil, err
	}
	return &operator{conf: conf, gov: gov}, nil
}

// hostConfig is the runtime the operator's config asks for: its limits,
// egress by its grants, drawing on its governor, and the bounds of warm
// instances.
func (o *operator) hostConfig(cacheDir string, logger *slog.Logger) host.Config {
	return host.Config{CacheDir: cacheDir, Logger: logger, Limits: o.conf.HostLimits(),
		Egress: toolhostv1.Egress{Grants: o.conf.EgressGrants(), Governor: o.gov}, Compile: compileLimits(),
		Reuse: o.conf.HostReuse(), ExtismConfig: o.conf.ExtismConfig()}
}

// compileLimits compiles each module in a child process, this executable
// (main turns it into the compiler when host.CompileChildEnv is set),
// under the host's default deadline and memory limit: a hostile module
// can make wazero's compiler take minutes and gigabytes.
func compileLimits() host.CompileLimits {
	exe, err := os.Executable()
	if err != nil {
		return host.CompileLimits{} // compile in this process, unbounded
	}
	return host.CompileLimits{Command: []string{exe}}
}

// loaderOptions are the operator's word on the tools for the loader: the
// per-tool overrides and views, the module prefixes, and whether wire names
// stay exact (serve --tool-names=exact).
func (o *operator) loaderOptions(exactNames bool) loader.Options {
	return loader.Options{Overrides: toolOverrides(o.conf), Prefixes: o.conf.Prefixes(), ExactNames: exactNames,
		Reuse: o.conf.ModuleReuse()}
}

// warnUnusedPrefixes warns about [modules."M.wasm"] prefixes for files the
// plugins folder does not have (a typo, or a renamed file): they would
// silently change nothing.
func (o *operator) warnUnusedPrefixes(reg *registry.Registry, logger *slog.Logger) {
	loaded := map[string]bool{}
	for _, t := range reg.List() {
		loaded[filepath.Base(t.Module.Path)] = true
	}
	for _, name := range slices.Sorted(maps.Keys(o.conf.Prefixes())) {
		if !loaded[name] {
			logger.Warn("config gives a prefix to a module the plugins folder does not have", "module", name)
		}
	}
}

// Close stops the governor.
func (o *operator) Close() { o.gov.Close() }
