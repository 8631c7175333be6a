package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
	toolserver "github.com/toolhost/toolhost/server"
)

// newServeCmd is serve's command line: the flags of toolserver.Flags bound to
// one toolserver.Settings, the config file under them, and toolserver.Build.
func newServeCmd() *cobra.Command {
	var s toolserver.Settings
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tools in the plugins folder over MCP",
		Long: `serve loads every .wasm module in the plugins folder and serves its tools over
MCP: Streamable HTTP at http://ADDR/mcp, or stdin/stdout with --stdio. Logs go
to stderr. The folder is watched: a new or replaced .wasm is loaded and swapped
in while calls in flight finish on the old version; a removed file removes its
tools; a file that fails to load leaves its previous version serving. On
SIGINT or SIGTERM it stops accepting work and lets calls in flight finish, up
to --grace.`,
		Example: `  toolhost serve
  toolhost serve --plugins ./plugins --addr 127.0.0.1:7331
  toolhost serve --stdio          # for Claude Desktop or the MCP Inspector`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, s)
		},
	}
	s.Bind(cmd.Flags())
	return cmd
}

func runServe(cmd *cobra.Command, s toolserver.Settings) error {
	ctx := cmd.Context()
	if err := s.LoadFile(cmd.Flags().Changed); err != nil {
		return err
	}
	tracing, flushTraces, err := startTracing(ctx, slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil)))
	if err != nil {
		return err
	}
	defer flushTraces()
	s.TokensEnv = os.Getenv("TOOLHOST_TOKENS")
	s.Log, s.Version, s.Compile, s.TracerProvider = cmd.ErrOrStderr(), version, compileLimits(), tracing.Provider()
	srv, err := toolserver.Build(ctx, s)
	if err != nil {
		if ctx.Err() != nil {
			return nil // SIGINT or SIGTERM during the start-up compiles: stop here
		}
		return err
	}
	defer srv.Close()
	return srv.Run(ctx)
}

// compileLimits compiles each module in a child process, this executable
// (main turns it into the compiler when host.CompileChildEnv is set),
// under the host's default deadline and memory limit: a hostile module
// can make wazero's compiler take minutes and gigabytes.
func compileLimits() host.CompileLimits {
	exe, err := os.Executable()
	if err != nil {
		return host.CompileLimits{} // compile in this process, unbounded
	}
	return host.CompileLimits{Command: []string{exe}}
}
