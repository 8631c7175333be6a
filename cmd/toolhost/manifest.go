package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
)

func newManifestCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "manifest",
		Short: "Work with the manifest a module carries (the toolhost.manifest section)",
	}
	cmd.AddCommand(newManifestEmbedCmd())
	return cmd
}

func newManifestEmbedCmd() *cobra.Command {
	var cacheDir string
	cmd := &cobra.Command{
		Use:   "embed FILE.wasm...",
		Short: "Write each module's manifest into it, so that serve lists it before compiling it",
		Long: `embed compiles each module, runs its toolhost_describe as inspect does, and
writes what it returned (with the facts the host reads from the compiled code)
into the module as its ` + abi.ManifestSection + ` custom section, replacing any it had.
serve then lists the module's tools at once, without compiling or running it,
and checks the section against the module's own describe when it compiles: a
module whose section disagrees is refused. The code is unchanged; the file's
sha256, its version, changes (docs/ABI.md). make plugins runs it.`,
		Example: `  toolhost manifest embed plugins/*.wasm`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rt, err := localRuntime(cmd, cacheDir)
			if err != nil {
				return err
			}
			defer rt.Close(context.Background())
			for _, path := range args {
				if err := embedManifest(ctx, rt, path); err != nil {
					cmd.PrintErrln("invalid module:", err)
					return &exitError{code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cacheDir, "cache-dir", "", `compilation cache folder ("off" disables)`)
	return cmd
}

// embedManifest rewrites path with its manifest embedded, through a
// temporary file and a rename: a server watching the folder never reads
// half a module.
func embedManifest(ctx context.Context, rt *host.Runtime, path string) error {
	wasm, err := host.ReadModuleFile(path)
	if err != nil {
		return fmt.Errorf("%s: cannot read: %w", path, err)
	}
	out, err := rt.EmbedManifest(ctx, path, wasm)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".embed-*")
	if err != nil {
		return err
	}
	_, err = f.Write(out)
	if err == nil {
		err = f.Chmod(fi.Mode().Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
