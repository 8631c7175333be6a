package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/transport"
)

// listedTool is one row of `toolhost list --json`.
type listedTool struct {
	// Name is the name clients call the tool by (its wire name).
	Name string `json:"name"`
	// Manifest is the manifest name, the tool's identity (config, audit,
	// events); toolhost call takes either.
	Manifest    string `json:"manifest_name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Idempotent  bool   `json:"idempotent"`
	ReadOnly    bool   `json:"read_only"`
	TimeoutMS   any    `json:"timeout_ms,omitempty"`
	Module      any    `json:"module,omitempty"`
	// Instances is the tool's instance mode: "fresh" or "reuse" (warm
	// instances per caller; their pools are on /metrics).
	Instances string `json:"instances,omitempty"`
	// Warm is the tool's warm instances when the list was made, all
	// callers together: {idle, busy, warming, callers}; absent when none.
	Warm map[string]int `json:"warm,omitempty"`
}

func newListCmd() *cobra.Command {
	var server string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools of a running server",
		Long: `list prints the tools of a running server: NAME is what MCP clients see
and call (text_count), MANIFEST NAME the tool's own name (text.count), which
the config, the audit log and events use; toolhost call takes either. Then
every file of the plugins folder: compiling, serving (its version) or refused
(the reason, as inspect prints it); toolhost status prints the same with the
server's settings (status --json has it as .modules).`,
		Example: `  toolhost list
  toolhost list --json | jq '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs, err := connect(cmd.Context(), server)
			if err != nil {
				return err
			}
			defer cs.Close()
			var rows []listedTool
			for t, err := range cs.Tools(cmd.Context(), nil) {
				if err != nil {
					return err
				}
				manifest, _ := t.Meta[transport.MetaToolName].(string)
				instances, _ := t.Meta[transport.MetaToolInstances].(string)
				warm := warmCounts(t.Meta[transport.MetaToolWarm])
				row := listedTool{Name: t.Name, Manifest: manifest, Title: t.Title, Description: t.Description,
					TimeoutMS: t.Meta[transport.MetaToolTimeoutMS], Module: t.Meta[transport.MetaToolModule], Instances: instances, Warm: warm}
				if t.Annotations != nil {
					row.Idempotent, row.ReadOnly = t.Annotations.IdempotentHint, t.Annotations.ReadOnlyHint
				}
				rows = append(rows, row)
			}
			if asJSON {
				enc := json.NewEncoder(jsonWriter{cmd.OutOrStdout()})
				enc.SetIndent("", "  ")
				if rows == nil {
					rows = []listedTool{}
				}
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tMANIFEST NAME\tIDEMPOTENT\tREAD-ONLY\tTIMEOUT\tINSTANCES\tMODULE\tTITLE")
			for _, r := range rows {
				timeout := "-"
				if r.TimeoutMS != nil {
					timeout = fmt.Sprintf("%vms", r.TimeoutMS)
				}
				manifest := r.Manifest
				if manifest == "" {
					manifest = "-" // a server that is not toolhost
				}
				instances := r.Instances
				if instances == "" {
					instances = "-" // a server that is not toolhost
				}
				if r.Warm != nil {
					instances += fmt.Sprintf(" (%d warm, %d callers)", r.Warm["idle"]+r.Warm["busy"]+r.Warm["warming"], r.Warm["callers"])
				}
				fmt.Fprintf(tw, "%s\t%s\t%v\t%v\t%s\t%s\t%s\t%s\n", safeLine(r.Name), safeLine(manifest), r.Idempotent, r.ReadOnly,
					timeout, safeLine(instances), safeLine(moduleID(r.Module)), safeLine(r.Title))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			// Then every file of the folder, the ones not listed too:
			// compiling, or refused and why.
			st, err := fetchStatus(cmd, server)
			if err != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "\nmodule files: unknown (%v)\n", err)
				return nil
			}
			fmt.Fprintln(cmd.OutOrStdout())
			return printModules(cmd.OutOrStdout(), st.Modules)
		},
	}
	addServerFlag(cmd, &server)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// moduleID is a module's file name and the first 12 hex digits of its
// sha256, its identity across reloads ("-" for built-in tools).
func moduleID(m any) string {
	mod, ok := m.(map[string]any)
	if !ok {
		return "-"
	}
	path, _ := mod["path"].(string)
	sha, _ := mod["sha256"].(string)
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return filepath.Base(path) + "@" + sha
}

// warmCounts reads a listed tool's toolhost/warm _meta; nil when there is
// none.
func warmCounts(v any) map[string]int {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, x := range m {
		if f, ok := x.(float64); ok {
			out[k] = int(f)
		}
	}
	return out
}
