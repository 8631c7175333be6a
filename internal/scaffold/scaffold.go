// Package scaffold writes a new tool project, what `toolhost new` makes: a
// folder outside the repository with one tool in one language, a test of
// its logic, and a Makefile whose default target builds the module, embeds
// its manifest and drops it into a plugins folder the way a running server
// expects (a temporary name, then a rename), so hot reload picks it up.
package scaffold

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Langs are the languages a project can be made in, as --lang names them.
var Langs = []string{"go", "c", "rust", "as"}

// SDKVersion is the version of the Go guest SDK module a Go project
// requires when no local checkout is given (Options.SDK).
const SDKVersion = "v0.1.0"

// Options say what to write.
type Options struct {
	// Name names the project, its module file (NAME.wasm) and its tool
	// (NAME.run): a lower-case letter, then lower-case letters, digits
	// and underscores, at most 64 in all.
	Name string
	// Lang is one of Langs.
	Lang string
	// Dir is the folder to write; it must not exist or be empty.
	Dir string
	// Plugins is the plugins folder the Makefile installs into (made
	// absolute, so the project can move).
	Plugins string
	// Toolhost is the toolhost binary the Makefile runs for `manifest
	// embed` (the one that made the project, by default).
	Toolhost string
	// SDK, for Go, is a local copy of the guest SDK module (abi/guest of
	// a toolhost checkout) the project's go.mod replaces the published
	// one with; empty requires SDKVersion from the module proxy. For Rust
	// it is the toolhost crate (abi/rust of a checkout), which is not
	// published: a Rust project needs it. C and AssemblyScript projects
	// carry a copy of their SDK (toolhost.h; toolhost/*.ts) and ignore it.
	SDK string
}

// ErrName is returned for a name Options.Name's rule refuses.
var ErrName = errors.New("a project name is a lower-case letter, then lower-case letters, digits and underscores (at most 64)")

// ErrRustSDK is returned for a Rust project without Options.SDK.
var ErrRustSDK = errors.New("a Rust project needs the toolhost crate's folder (--sdk: abi/rust of a toolhost checkout); it is not published")

// ErrPath is returned for an SDK, plugins or toolhost path holding a
// control character, which no go.mod, Cargo.toml or Makefile can carry.
var ErrPath = errors.New("a path given to toolhost new holds a control character")

// LangError is returned for a language scaffold does not know.
type LangError struct{ Lang string }

func (e *LangError) Error() string {
	return fmt.Sprintf("no template for language %q (have %s)", e.Lang, strings.Join(Langs, ", "))
}

// ExistsError is returned when Options.Dir already holds files: nothing
// is written over them.
type ExistsError struct{ Dir string }

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s exists and is not empty: choose another --dir or remove it", e.Dir)
}

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

//go:embed all:templates
var templates embed.FS

// Write makes the project and returns the paths it wrote, sorted. On an
// error it leaves nothing behind: a folder it created is removed, and in a
// folder that was there (empty) the files it wrote.
func Write(o Options) ([]string, error) {
	if !validName.MatchString(o.Name) {
		return nil, fmt.Errorf("%q: %w", o.Name, ErrName)
	}
	if !slices.Contains(Langs, o.Lang) {
		return nil, &LangError{o.Lang}
	}
	root := "templates/" + o.Lang
	if o.Lang == "rust" && o.SDK == "" {
		return nil, ErrRustSDK
	}
	if strings.ContainsFunc(o.SDK, unicode.IsControl) || strings.ContainsFunc(o.Plugins, unicode.IsControl) ||
		strings.ContainsFunc(o.Toolhost, unicode.IsControl) {
		return nil, ErrPath
	}
	files, err := render(root, o)
	if err != nil {
		return nil, err
	}
	return files.write(o.Dir)
}

type fileSet map[string][]byte

// render fills in every template (FILE.tmpl) under root, naming each
// output after it without the suffix; other files are copied as they are
// (the C SDK's header, a copy of abi/c/toolhost.h that make abi-bundle
// refreshes; the AssemblyScript SDK's sources likewise). The placeholders are plain {{WORD}}s rather than
// text/template: text/template would keep every exported method in the
// server's binary (docs/BENCHMARKS.md, "The binary").
func render(root string, o Options) (fileSet, error) {
	sdkReplace := ""
	if o.SDK != "" && o.Lang == "go" {
		sdkReplace = "\n\n// A local copy of the guest SDK (toolhost new --sdk); delete this line to\n" +
			"// build against the published module.\nreplace github.com/toolhost/toolhost/abi/guest => " + goModPath(o.SDK)
	}
	fill := strings.NewReplacer("{{NAME}}", o.Name, "{{PLUGINS}}", o.Plugins, "{{TOOLHOST}}", o.Toolhost,
		"{{SDK_VERSION}}", SDKVersion, "{{SDK_REPLACE}}", sdkReplace, "{{SDK}}", tomlString(o.SDK))
	files := fileSet{}
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.ReplaceAll(strings.TrimPrefix(p, root+"/"), "NAME", o.Name)
		if name, ok := strings.CutSuffix(rel, ".tmpl"); ok {
			files[name] = []byte(fill.Replace(string(src)))
		} else {
			files[rel] = src
		}
		return nil
	})
	return files, err
}

// goModPath is p as go.mod writes a path: bare, or quoted when it holds
// a space or a quote, as go mod edit does.
func goModPath(p string) string {
	if strings.ContainsAny(p, " \t\"'`\\") {
		return strconv.Quote(p)
	}
	return p
}

// tomlString is p escaped for the inside of a TOML basic string (no
// control characters: Write refused those).
func tomlString(p string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p)
}

// write puts the files into dir, which must not hold any yet.
func (files fileSet) write(dir string) ([]string, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return nil, &ExistsError{dir}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	created := false
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			if created {
				os.RemoveAll(dir) // it did not exist: all in it is ours
			} else {
				for _, w := range written {
					os.Remove(w)
				}
			}
			return nil, err
		}
		written = append(written, p)
	}
	sort.Strings(written)
	return written, nil
}
