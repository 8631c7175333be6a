// Command toolhost-storm runs the retry-storm experiment of
// docs/GOVERNOR.md. It is its own binary, not a subcommand of toolhost,
// because its plots pull gonum's plotting stack (fonts, PDF and SVG
// writers): about a quarter of the server's size and 80 packages that
// serving tools never uses. `make storm` builds and runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/cmd/toolhost-storm/internal/storm"
)

func main() {
	cmd := newStormCmd()
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		os.Exit(2)
	}
}

func newStormCmd() *cobra.Command {
	var o storm.Options
	var doc, plotPath, fleetURL string
	var replicas int
	var fleetConfig bool
	cmd := &cobra.Command{
		Use:   "toolhost-storm --module EGRESS.wasm [flags]",
		Short: "Nine agents, one quota: own backoff versus the governor",
		Long: `toolhost-storm reproduces the retry-storm experiment of docs/GOVERNOR.md on loopback: an
upstream that enforces a quota and answers 429 beyond it, and agents of mixed
priorities calling it through a real tool with governed egress (the module
host/testdata/egress), first retrying with exponential backoff and jitter on
their own, then through the rate governor. It prints a table; with --doc it
rewrites the results section of that Markdown file, with --plot it draws
upstream answers over time to a PNG. 'make storm' builds the module and runs
this with both.`,
		Example: `  make storm
  toolhost-storm --module bin/egress.wasm --rate 20 --burst 5 --max-duration 30s`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fleetConfig {
				fmt.Fprint(cmd.OutOrStdout(), storm.FleetConfig(o, replicas))
				return nil
			}
			if fleetURL != "" {
				return runFleet(cmd, o, fleetURL, replicas)
			}
			o.Progress = cmd.ErrOrStderr()
			r, err := storm.Run(cmd.Context(), o)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), r.Setup())
			fmt.Fprintln(cmd.OutOrStdout())
			fmt.Fprint(cmd.OutOrStdout(), r.Markdown())
			ref := ""
			if plotPath != "" {
				if err := r.Plot(plotPath); err != nil {
					return fmt.Errorf("plot: %w", err)
				}
				ref = plotPath
				if doc != "" {
					if rel, err := filepath.Rel(filepath.Dir(doc), plotPath); err == nil {
						ref = filepath.ToSlash(rel)
					}
				}
			}
			if doc != "" {
				command := "toolhost-storm " + strings.Join(os.Args[1:], " ")
				if err := r.UpdateDoc(doc, ref, strings.TrimSpace(command)); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "storm: wrote the results to %s\n", doc)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Module, "module", "bin/egress.wasm", "the egress test module (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared ./host/testdata/egress)")
	f.IntVar(&o.Rate, "rate", 20, "the upstream's quota, requests per second")
	f.IntVar(&o.Burst, "burst", 5, "the upstream's burst")
	f.IntVar(&o.Headroom, "headroom", 1, "tokens the governor's burst is set below the upstream's (-1: none)")
	f.Float64Var(&o.Margin, "margin", 0.05, "fraction of the upstream's rate the governor's quota is set below (-1: none)")
	f.IntVar(&o.Interactive, "interactive", 3, "interactive agents")
	f.IntVar(&o.Background, "background", 6, "background agents")
	f.IntVar(&o.InteractiveCalls, "interactive-calls", 20, "calls per interactive agent")
	f.IntVar(&o.BackgroundCalls, "background-calls", 40, "calls per background agent")
	f.DurationVar(&o.Think, "think", 500*time.Millisecond, "an interactive agent's pause between calls")
	f.DurationVar(&o.MaxDuration, "max-duration", 60*time.Second, "bound on each arm")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of the agents' jitter")
	f.StringVar(&o.CacheDir, "cache-dir", "", "compilation cache folder (default: the host's)")
	f.StringVar(&doc, "doc", "", "Markdown file whose storm section to rewrite (docs/GOVERNOR.md)")
	f.StringVar(&plotPath, "plot", "", "PNG file for the plot (docs/governor-storm.png)")
	f.StringVar(&fleetURL, "fleet", "", "run only the governed arm, every agent an MCP client of this URL (a fleet's load balancer: make fleet-storm)")
	f.IntVar(&replicas, "replicas", 3, "with --fleet or --fleet-config: the fleet's replicas")
	f.BoolVar(&fleetConfig, "fleet-config", false, "print the config file the fleet's replicas need for --fleet, and exit")
	return cmd
}

// runFleet runs the governed arm against a fleet and fails when a grant
// went over the quota or the upstream answered 429.
func runFleet(cmd *cobra.Command, o storm.Options, url string, replicas int) error {
	r, err := storm.RunFleet(cmd.Context(), o, url, replicas)
	if err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), (&storm.Report{Options: r.Options}).Setup())
	fmt.Fprintf(cmd.OutOrStdout(), "Agents are MCP clients of %s (%d replicas sharing the quota through Redis).\n\n", url, replicas)
	fmt.Fprint(cmd.OutOrStdout(), r.Markdown())
	return r.Check()
}
