// Command toolhost hosts sandboxed WebAssembly tools behind an MCP server
// and calls them from the shell. See `toolhost --help`.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/host"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if os.Getenv(host.CompileChildEnv) == "1" {
		// serve re-executes itself to compile modules under limits.
		os.Exit(host.CompileChildMain(os.Stdin, os.Stderr))
	}
	os.Exit(doMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// exitError carries an exit code through cobra without printing anything
// more: the command has already written what the user needs.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit" }

// doMain runs the CLI with explicit streams so that tests can drive it.
func doMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exitError); ok {
		return ee.code
	}
	root.PrintErrln("toolhost:", safeLines(err.Error()))
	return 2
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "toolhost",
		Short: "A host for sandboxed WebAssembly tools, served over MCP",
		Long: `toolhost runs tools compiled to WebAssembly, each call in a fresh sandboxed
instance, behind a dispatcher (timeouts, error envelopes) and an MCP server.

Drop .wasm tool modules into ./plugins, run 'toolhost serve', and call them
from any MCP client or with 'toolhost call'.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		// Without a subcommand: --version, else the help.
		RunE: func(cmd *cobra.Command, _ []string) error {
			if v, _ := cmd.Flags().GetBool("version"); v {
				printVersion(cmd)
				return nil
			}
			return cmd.Help()
		},
	}
	// Our own flag rather than cobra's Version field: a custom version
	// template would link text/template, whose method lookups by name keep
	// every exported method in the binary (docs/BENCHMARKS.md, "The binary").
	root.Flags().Bool("version", false, "print the version, as 'toolhost version' does, and exit")
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newServeCmd(), newCallCmd(), newListCmd(), newInspectCmd(), newManifestCmd(), newStatusCmd(), newEventsCmd(), newVersionCmd(), newGovernorCmd(), newPlanCmd(), newAccessCmd(), newNewCmd(), newPullCmd(), newPushCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the toolhost version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			printVersion(cmd)
			return nil
		},
	}
}

// printVersion is what both `toolhost version` and `toolhost --version`
// print.
func printVersion(cmd *cobra.Command) {
	cmd.Printf("toolhost %s (guest ABI v1)\n", version)
}
