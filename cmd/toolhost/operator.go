package main

import (
	"log/slog"

	"github.com/toolhost/toolhost/config"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
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
// governor.state on bus (nil for none). Close it when done.
func newOperator(path string, bus *events.Bus) (*operator, error) {
	var conf *config.Config
	if path != "" {
		var err error
		if conf, err = config.Load(path); err != nil {
			return nil, err
		}
	}
	gov, err := governor.New(conf.GovernorConfig(governor.Config{Events: bus}))
	if err != nil {
		return nil, err
	}
	return &operator{conf: conf, gov: gov}, nil
}

// hostConfig is the runtime the operator's config asks for: its limits,
// and egress by its grants, drawing on its governor.
func (o *operator) hostConfig(cacheDir string, logger *slog.Logger) host.Config {
	return host.Config{CacheDir: cacheDir, Logger: logger, Limits: o.conf.HostLimits(),
		Egress: host.Egress{Grants: o.conf.EgressGrants(), Governor: o.gov}}
}

// Close stops the governor.
func (o *operator) Close() { o.gov.Close() }
