package main

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/internal/config"
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
	var resource, prompt bool
	cmd := &cobra.Command{
		Use:   "check [--config FILE] IDENTITY TOOL [--scope S]... [--resource | --prompt]",
		Short: "Say whether IDENTITY may see and call TOOL, and which rule decides",
		Long: `check decides, from the config file alone (no server, no plugins, no secrets),
whether a caller may see and call a tool, and explains the decision: the rule
that matched (its number and line), or that none did. TOOL is the manifest
name (text.count); IDENTITY is the caller's token identity ("" for a server
without tokens); --scope adds a scope the caller's token carries (OAuth).
With --resource, TOOL is a resource URI (or a resource template's URI
template) and the rules' resources globs decide; with --prompt, a prompt
name and their prompts globs.
Exit status 0: allowed; 1: denied; 2: the config cannot be used.`,
		Example: `  toolhost access check --config toolhost.toml support-alice billing.refund
  toolhost access check --config toolhost.toml carol billing.refund --scope tools:billing
  toolhost access check --config toolhost.toml alice notes://todo --resource`,
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
			decide := p.Decide
			switch {
			case resource && prompt:
				return errors.New("--resource and --prompt cannot both be set")
			case resource:
				decide = p.DecideResource
			case prompt:
				decide = p.DecidePrompt
			}
			d := decide(args[0], scopes, args[1])
			cmd.Println(p.Explain(d))
			if !d.Allowed {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "config", "", "the TOML config file whose [[access]] rules to ask (none: no rules, everything allowed)")
	cmd.Flags().StringArrayVar(&scopes, "scope", nil, "a scope the caller's token carries (repeatable)")
	cmd.Flags().BoolVar(&resource, "resource", false, "TOOL is a resource URI (or URI template)")
	cmd.Flags().BoolVar(&prompt, "prompt", false, "TOOL is a prompt name")
	return cmd
}
