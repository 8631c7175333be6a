package server

import (
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// accessPolicy is the config's access policy for the transport, with a
// warning when rules cannot tell callers apart (no tokens: every caller is
// the identity "").
func accessPolicy(cfg *config.Config, tokens *transport.Tokens, stdio bool, logger *slog.Logger) *access.Policy {
	p := cfg.AccessPolicy()
	if !p.Empty() && (tokens == nil || stdio) {
		logger.Warn("the config has [[access]] rules but callers have no token identity (stdio, or no --token-file): every caller is the identity \"\", which only \"*\" matches")
	}
	return p
}

// warnLiteralSecrets names each secret written in the config file as a
// plain string (never its value): the file then holds the secret wherever
// it is copied, checked in or backed up.
func warnLiteralSecrets(cfg *config.Config, file string, logger *slog.Logger) {
	for _, s := range cfg.LiteralSecrets() {
		logger.Warn(`the config holds a secret as a literal; write {env = "NAME"} or {file = "/run/secrets/NAME"} instead`,
			"key", s.Key(), "line", s.Line(), "config", file)
	}
}

// warnUnmatchedAccess warns about each [[access]] tools glob that matches
// no tool the server has at start (a misspelt name would otherwise
// silently decide nothing). plan says whether toolhost.plan is served.
func warnUnmatchedAccess(cfg *config.Config, reg *registry.Registry, plan bool, logger *slog.Logger) {
	names := []string{}
	for _, t := range reg.List() {
		names = append(names, t.Name)
	}
	if plan {
		names = append(names, transport.PlanToolName)
	}
	for i, r := range cfg.AccessPolicy().Rules() {
		for _, g := range r.Tools {
			if !slices.ContainsFunc(names, func(n string) bool { return access.Match(g, n) }) {
				logger.Warn("an [[access]] rule names tools no module serves (rules match manifest names such as text.count)",
					"rule", i+1, "line", r.Line, "tools", g)
			}
		}
	}
}

// warnBareOAuthNames says, with [auth.oauth] on, which --operator names
// and [[access]] identities name no static identity and hold no ':': they
// were probably written for an OAuth subject, whose identity is
// "oauth:SUBJECT", and so match no one (docs/CONFIG.md, Identities).
func warnBareOAuthNames(cfg *config.Config, operators []string, tokens *transport.Tokens, logger *slog.Logger) {
	static := tokens.Identities()
	bare := func(name string) bool {
		return !strings.ContainsAny(name, ":*?") && !slices.Contains(static, name)
	}
	for _, op := range operators {
		if bare(op) {
			logger.Warn("--operator names no static identity; OAuth callers are named oauth:SUBJECT",
				"operator", op, "oauth_form", transport.OAuthIdentityPrefix+op)
		}
	}
	for i, r := range cfg.AccessPolicy().Rules() {
		for _, g := range r.Identities {
			if bare(g) {
				logger.Warn("an [[access]] rule names no static identity; OAuth callers are named oauth:SUBJECT",
					"rule", i+1, "line", r.Line, "identity", g, "oauth_form", transport.OAuthIdentityPrefix+g)
			}
		}
	}
}

// warnUnusedGrants logs each egress grant no loaded module can use: the
// file name is probably misspelt.
func warnUnusedGrants(cfg *config.Config, tools interface{ Registry() *registry.Registry }, logger *slog.Logger) {
	loaded := map[string]bool{}
	for _, t := range tools.Registry().List() {
		loaded[filepath.Base(t.Module.Path)] = true
	}
	for name := range cfg.EgressGrants() {
		if !loaded[name] {
			logger.Warn("config grants egress to a module the plugins folder does not have", "module", name)
		}
	}
}
