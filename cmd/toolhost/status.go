package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/loader"
)

// statusReport is what GET /status answers and `toolhost status` prints:
// the server, and what it does with every file of its plugins folder.
type statusReport struct {
	Version    string   `json:"version"`
	Transports []string `json:"transports"`
	Plugins    string   `json:"plugins"`
	// Starting is /readyz's progress note while modules present at start
	// are not all listed; empty after.
	Starting string             `json:"starting,omitempty"`
	Cache    statusCache        `json:"cache"`
	Grants   []statusGrant      `json:"grants"`
	Modules  []loader.FileState `json:"modules"`
}

type statusCache struct {
	// Dir is the compilation and describe cache folder; empty: none.
	Dir string `json:"dir"`
	// Entries is how many compiled modules the cache holds.
	Entries int `json:"entries"`
	// Hits and Misses count module loads since the start that the cache
	// served and those it had to compile.
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
	// Compiling and Resident are the runtime's modules compiling now and
	// with code in memory.
	Compiling int64 `json:"compiling"`
	Resident  int   `json:"resident"`
}

// statusGrant is one egress grant, without the header values it injects
// (secrets): their names only.
type statusGrant struct {
	Module  string   `json:"module"`
	Hosts   []string `json:"hosts"`
	Methods []string `json:"methods,omitempty"`
	Schemes []string `json:"schemes,omitempty"`
	Headers []string `json:"injected_headers,omitempty"`
}

// statusSource is what a server reports from.
type statusSource struct {
	plugins    string
	transports []string
	cfg        *config.Config
	rt         *host.Runtime
	live       *loader.Live
}

func (s *statusSource) report() statusReport {
	r := statusReport{Version: version, Transports: s.transports, Plugins: s.plugins, Starting: s.live.StartingNote(),
		Grants: []statusGrant{}, Modules: s.live.Files()}
	r.Cache.Dir = s.rt.CacheDir()
	r.Cache.Entries, _ = s.rt.CacheEntries()
	r.Cache.Hits, r.Cache.Misses = s.live.CacheStats()
	st := s.rt.ModuleStats()
	r.Cache.Compiling, r.Cache.Resident = st.Compiling, st.Resident
	grants := s.cfg.EgressGrants()
	for _, name := range slices.Sorted(maps.Keys(grants)) {
		g := grants[name]
		sg := statusGrant{Module: name, Hosts: g.Hosts, Methods: g.Methods, Schemes: g.Schemes}
		for _, hs := range g.Headers {
			for h := range hs {
				if !slices.Contains(sg.Headers, h) {
					sg.Headers = append(sg.Headers, h)
				}
			}
		}
		slices.Sort(sg.Headers)
		r.Grants = append(r.Grants, sg)
	}
	if r.Modules == nil {
		r.Modules = []loader.FileState{}
	}
	return r
}

// handler answers GET /status (behind the same authentication as /mcp).
func (s *statusSource) handler() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.report())
	}
}

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
func fetchStatus(cmd *cobra.Command, server string) (*statusReport, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("--server %q: %w", server, err)
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
	var r statusReport
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%s: not a status report: %v", u, err)
	}
	return &r, nil
}
