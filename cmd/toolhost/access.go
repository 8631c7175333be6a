package main

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/access"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

func newAccessCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "access",
		Short: "Explain the config's [[access]] rules",
	}
	cmd.AddCommand(newAccessCheckCmd())
	return cmd
}

func newAccessCheckCmd() *cobra.Command {
	var file string
	var scopes []string
	cmd := &cobra.Command{
		Use:   "check [--config FILE] IDENTITY TOOL [--scope S]...",
		Short: "Say whether IDENTITY may see and call TOOL, and which rule decides",
		Long: `check decides, from the config file alone (no server, no plugins, no secrets),
whether a caller may see and call a tool, and explains the decision: the rule
that matched (its number and line), or that none did. TOOL is the manifest
name (text.count); IDENTITY is the caller's token identity ("" for a server
without tokens); --scope adds a scope the caller's token carries (OAuth).
Exit status 0: allowed; 1: denied; 2: the config cannot be used.`,
		Example: `  toolhost access check --config toolhost.toml support-alice billing.refund
  toolhost access check --config toolhost.toml carol billing.refund --scope tools:billing`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var conf *config.Config
			if file != "" {
				var err error
				if conf, err = config.Load(file); err != nil {
					return err
				}
			}
			p := conf.AccessPolicy()
			d := p.Decide(args[0], scopes, args[1])
			cmd.Println(p.Explain(d))
			if !d.Allowed {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "the TOML config file whose [[access]] rules to ask (none: no rules, everything allowed)")
	cmd.Flags().StringArrayVar(&scopes, "scope", nil, "a scope the caller's token carries (repeatable)")
	return cmd
}

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
