package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/loader"
	toolserver "github.com/toolhost/toolhost/server"
)

func newStatusCmd() *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print a running server's version, transports, cache, grants and every module file's state",
		Long: `status asks a running server (GET /status beside /mcp, with $TOOLHOST_TOKEN as
list does) for its version, transports, compilation cache and egress grants
(header names only), and for every file of its plugins folder: compiling,
serving (its version, the sha256 of its bytes) or refused (the reason, as
inspect prints it).`,
		Example: `  toolhost status
  toolhost status --json | jq '.modules[] | select(.state == "refused")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := fetchStatus(cmd, server)
			if err != nil {
				writeEnvelope(cmd.ErrOrStderr(), clientFault(err))
				return &exitError{code: 1}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "toolhost %s\ntransports: %s\nplugins: %s\n", r.Version, strings.Join(r.Transports, ", "), r.Plugins)
			if r.Starting != "" {
				fmt.Fprintf(out, "%s\n", r.Starting)
			}
			cacheDir := r.Cache.Dir
			if cacheDir == "" {
				cacheDir = "(none)"
			}
			fmt.Fprintf(out, "cache: %s, %d compiled modules; this start %d hits, %d misses; %d compiling, %d resident\n",
				cacheDir, r.Cache.Entries, r.Cache.Hits, r.Cache.Misses, r.Cache.Compiling, r.Cache.Resident)
			if len(r.Grants) == 0 {
				fmt.Fprintln(out, "grants: none")
			}
			for _, g := range r.Grants {
				fmt.Fprintf(out, "grant %s: hosts %s", g.Module, strings.Join(g.Hosts, " "))
				if len(g.Headers) > 0 {
					fmt.Fprintf(out, "; injects %s", strings.Join(g.Headers, " "))
				}
				fmt.Fprintln(out)
			}
			fmt.Fprintln(out)
			return printModules(out, r.Modules)
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// printModules writes one line per module file: its state, version and
// tools, or why it was refused.
func printModules(w io.Writer, mods []loader.FileState) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tSTATE\tVERSION\tDETAIL")
	for _, m := range mods {
		v := m.SHA256
		if len(v) > 12 {
			v = v[:12]
		}
		if v == "" {
			v = "-"
		}
		detail := m.Reason
		if m.State == loader.StateServing {
			detail = fmt.Sprintf("%d tools", len(m.Tools))
			switch {
			case m.Verifying:
				detail += "; listed from its embedded manifest, code compiling (calls wait for it)"
			case !m.Compiled:
				detail += "; code not in memory (compiles on the next call)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", m.Path, m.State, v, detail)
	}
	return tw.Flush()
}

// fetchStatus gets GET /status from the server whose MCP endpoint is
// server.
func fetchStatus(cmd *cobra.Command, serverURL string) (*toolserver.StatusReport, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, fmt.Errorf("--server %q: %w", serverURL, err)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + "/status"
	u.RawQuery = ""
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach toolhost at %s (is `toolhost serve` running?): %w", u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, strings.TrimSpace(string(raw)))
	}
	var r toolserver.StatusReport
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: not a status report: %v", u, err)
	}
	return &r, nil
}
