package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/internal/scaffold"
)

func newNewCmd() *cobra.Command {
	var lang, dir, plugins, sdk string
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Start a tool project outside the repository: one tool, its test and a Makefile",
		Long: `new writes a folder (NAME, or --dir) holding a tool module in one language:
the tool NAME.run, a test of its logic, and a Makefile whose default target
builds NAME.wasm, embeds its manifest with this toolhost binary and drops it
into the plugins folder (a temporary name, then a rename), where a running
serve picks it up. make test runs the tests natively. Languages: ` + strings.Join(scaffold.Langs, ", ") + `.

A Go project requires the guest SDK module github.com/toolhost/toolhost/abi/guest
` + scaffold.SDKVersion + ` from the module proxy; --sdk DIR replaces it with a local copy
(abi/guest of a toolhost checkout). A Rust project needs --sdk: the toolhost
crate's folder (abi/rust of a checkout), which is not published. A C project
carries a copy of toolhost.h, an AssemblyScript one a copy of the SDK's
sources (toolhost/) and fetches AssemblyScript itself with npm ci.`,
		Example: `  toolhost new greet --lang go --plugins ./plugins && make -C greet
  toolhost new wc --lang c --plugins /srv/toolhost/plugins
  toolhost new stats --lang rust --sdk ~/src/toolhost/abi/rust
  toolhost new slug --lang as && make -C slug test`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := scaffold.Options{Name: args[0], Lang: lang, Dir: dir}
			if o.Dir == "" {
				o.Dir = args[0]
			}
			var err error
			if o.Plugins, err = filepath.Abs(plugins); err != nil {
				return err
			}
			if o.Toolhost, err = os.Executable(); err != nil {
				o.Toolhost = "toolhost"
			}
			if sdk != "" {
				if o.SDK, err = filepath.Abs(sdk); err != nil {
					return err
				}
				if want, ok := sdkFile[o.Lang]; ok {
					if _, err := os.Stat(filepath.Join(o.SDK, want[0])); err != nil {
						cmd.PrintErrf("--sdk %s: no %s there (want %s of a toolhost checkout)\n", sdk, want[0], want[1])
						return &exitError{code: 2}
					}
				}
			}
			written, err := scaffold.Write(o)
			if err != nil {
				cmd.PrintErrln("new:", err)
				return &exitError{code: 2}
			}
			for _, p := range written {
				cmd.Println(p)
			}
			cmd.Printf("\nmake -C %s       builds %s.wasm into %s\nmake -C %s test  runs its tests\n", o.Dir, o.Name, o.Plugins, o.Dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "go", "the tool's language: "+strings.Join(scaffold.Langs, ", "))
	cmd.Flags().StringVar(&dir, "dir", "", "the folder to write (default NAME); must not exist or be empty")
	cmd.Flags().StringVar(&plugins, "plugins", "./plugins", "the plugins folder the project's make installs into")
	cmd.Flags().StringVar(&sdk, "sdk", "", "the guest SDK to build against: Go, a local copy of its module (abi/guest of a toolhost checkout); Rust, the toolhost crate (abi/rust), required")
	return cmd
}

// sdkFile is, per language, the file --sdk's folder must hold and what
// that folder is.
var sdkFile = map[string][2]string{
	"go":   {"go.mod", "abi/guest"},
	"rust": {"Cargo.toml", "abi/rust"},
}
