package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolhost/toolhost/abi"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/transport"
)

func newInspectCmd() *cobra.Command {
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "inspect FILE.wasm",
		Short: "Check a module against the guest ABI and print its manifest",
		Long: `inspect compiles a module, checks its imports and exports against guest ABI v1,
runs toolhost_describe in a sandbox, and prints the resolved manifest. When the
module is not a valid tool it says exactly what is wrong and exits 1.`,
		Example: `  toolhost inspect plugins/text.wasm`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rt, err := localRuntime(cmd, cacheDir)
			if err != nil {
				return err
			}
			defer rt.Close(context.Background())
			m, err := rt.LoadFile(ctx, args[0])
			if err == nil {
				// What serve would refuse beyond the ABI: reserved names,
				// schemas that do not compile or cannot be listed over MCP.
				if err = loader.Check(m, loader.Options{Check: transport.CheckTool}); err != nil {
					err = fmt.Errorf("%s: %w", args[0], err)
				}
			}
			if err != nil {
				cmd.PrintErrln("invalid module:", safeLines(err.Error()))
				return &exitError{code: 1}
			}
			out := struct {
				Path   string `json:"path"`
				SHA256 string `json:"sha256"`
				ABI    int    `json:"abi"`
				Extism string `json:"extism,omitempty"`
				Tools  any    `json:"tools"`
				// What the module offers beside its tools, when it does.
				abi.Listing
				DynamicOffers bool `json:"dynamic_offers,omitempty"`
			}{m.Path, m.SHA256, m.Manifest.ABI, m.ExtismInterface(), m.Tools, m.Manifest.Listing, m.Manifest.DynamicOffers}
			enc := json.NewEncoder(jsonWriter{cmd.OutOrStdout()})
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}
	cmd.Flags().StringVar(&cacheDir, "cache-dir", "", `compilation cache folder ("off" disables)`)
	return cmd
}

// localRuntime is the runtime of a command that loads modules itself
// (inspect, manifest embed) rather than asking a server: its log on the
// command's stderr as text.
func localRuntime(cmd *cobra.Command, cacheDir string) (*host.Runtime, error) {
	return host.New(cmd.Context(), host.Config{CacheDir: cacheDir, Logger: slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))})
}
