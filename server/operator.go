package server

import (
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/internal/oci"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// Operator is what the config file gives every command that runs tools
// (serve, plan run): the config, the governor it configures, and the
// runtime settings they imply. Without a file the config is nil, whose
// every method gives the defaults. Its methods are safe for concurrent use.
type Operator struct {
	conf *config.Config
	gov  *governor.Governor
}

// LoadConfig reads the config file at path ("" for none: a nil Config)
// and resolves its secrets.
func LoadConfig(path string) (*config.Config, error) {
	if path == "" {
		return nil, nil
	}
	conf, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if err = conf.ResolveSecrets(); err != nil {
		return nil, err
	}
	return conf, nil
}

// NewOperator starts conf's governor (nil conf: no file), publishing
// governor.state on bus (nil for none). Close it when done.
func NewOperator(conf *config.Config, bus *events.Bus) (*Operator, error) {
	return newOperator(conf, bus, nil)
}

// newOperator is NewOperator where shared, if not nil, may give the
// governor a store shared with other replicas.
func newOperator(conf *config.Config, bus *events.Bus, shared func(governor.Config) (governor.Config, error)) (*Operator, error) {
	gcfg := conf.GovernorConfig()
	gcfg.Events = bus
	if shared != nil {
		var err error
		if gcfg, err = shared(gcfg); err != nil {
			return nil, err
		}
	}
	gov, err := governor.New(gcfg)
	if err != nil {
		return nil, err
	}
	return &Operator{conf: conf, gov: gov}, nil
}

// Config is the operator's config file, nil for none.
func (o *Operator) Config() *config.Config { return o.conf }

// Governor is the governor the config's quotas run in.
func (o *Operator) Governor() *governor.Governor { return o.gov }

// HostConfig is the runtime the operator's config asks for: its limits,
// egress by its grants, drawing on its governor, and the bounds of warm
// instances, with compile as the limits of a module's compile.
func (o *Operator) HostConfig(cacheDir string, logger *slog.Logger, compile host.CompileLimits) host.Config {
	return host.Config{CacheDir: cacheDir, Logger: logger, Limits: o.conf.HostLimits(),
		Egress: toolhostv1.Egress{Grants: o.conf.EgressGrants(), Governor: o.gov}, Compile: compile,
		Reuse: o.conf.HostReuse(), ExtismConfig: o.conf.ExtismConfig(),
		ExtismKeyring: o.conf.ExtismKeyring(), Snapshot: o.conf.ModuleSnapshot()}
}

// DispatcherConfig is the dispatcher the operator's config asks for, with
// its governor (events and stores are the caller's to add).
func (o *Operator) DispatcherConfig() dispatcher.Config {
	d := dispatcherConfig(o.conf)
	d.Governor = o.gov
	return d
}

// LoaderOptions are the operator's word on the tools of the plugins
// folder for the loader: the per-tool overrides and views, the module
// prefixes, whether wire names stay exact (serve --tool-names=exact), and
// with [trust] require = "signed" the lock file's gate.
func (o *Operator) LoaderOptions(exactNames bool, plugins string) loader.Options {
	opts := loader.Options{Overrides: toolOverrides(o.conf), Prefixes: o.conf.Prefixes(), ExactNames: exactNames,
		Reuse: o.conf.ModuleReuse()}
	if o.conf.RequiresSigned() {
		opts.Admit, opts.AdmitFile = oci.LockGate(plugins), oci.LockFile
	}
	return opts
}

// warnUnusedPrefixes warns about [modules."M.wasm"] prefixes for files the
// plugins folder does not have (a typo, or a renamed file): they would
// silently change nothing.
func (o *Operator) warnUnusedPrefixes(reg *registry.Registry, logger *slog.Logger) {
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
func (o *Operator) Close() { o.gov.Close() }
