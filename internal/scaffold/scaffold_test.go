package scaffold_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/toolhost/toolhost/internal/scaffold"
)

// The C template's header is a copy of abi/c/toolhost.h, refreshed by make
// abi-bundle: a project must start from the current SDK.
func TestHeaderIsCurrent(t *testing.T) {
	want, err := os.ReadFile("../../abi/c/toolhost.h")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("templates/c/toolhost.h")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/scaffold/templates/c/toolhost.h differs from abi/c/toolhost.h: run make abi-bundle")
	}
}

// The AssemblyScript template carries a copy of the SDK's sources, its
// lock file (named for the project) and its compiler options, refreshed
// by make abi-bundle: a project must start from the current SDK.
func TestASCopyIsCurrent(t *testing.T) {
	sdk := "../../abi/assemblyscript/"
	srcs, err := filepath.Glob(sdk + "assembly/*.ts")
	if err != nil || len(srcs) == 0 {
		t.Fatalf("no SDK sources: %v", err)
	}
	copies, _ := filepath.Glob("templates/as/toolhost/*.ts")
	if len(copies) != len(srcs) {
		t.Errorf("templates/as/toolhost has %d files, the SDK %d: run make abi-bundle", len(copies), len(srcs))
	}
	for _, src := range srcs {
		want, _ := os.ReadFile(src)
		got, err := os.ReadFile("templates/as/toolhost/" + filepath.Base(src))
		if _, body, _ := bytes.Cut(got, []byte("\n")); err != nil || !bytes.Equal(body, want) {
			t.Errorf("templates/as/toolhost/%s differs from %s: run make abi-bundle", filepath.Base(src), src)
		}
	}
	lock, _ := os.ReadFile(sdk + "package-lock.json")
	tmpl, _ := os.ReadFile("templates/as/package-lock.json.tmpl")
	if want := bytes.ReplaceAll(lock, []byte(`"@toolhost/guest"`), []byte(`"{{NAME}}"`)); !bytes.Equal(tmpl, want) {
		t.Error("templates/as/package-lock.json.tmpl is not the SDK's lock file: run make abi-bundle")
	}
	type asconfig struct {
		Targets map[string]map[string]any
		Options map[string]any
	}
	var a, b asconfig
	for p, v := range map[string]*asconfig{sdk + "asconfig.json": &a, "templates/as/asconfig.json": &b} {
		raw, err := os.ReadFile(p)
		if err == nil {
			err = json.Unmarshal(raw, v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("templates/as/asconfig.json's targets and options differ from the SDK's:\n%v\n%v", b, a)
	}
}

// Every language's files are written with each placeholder filled in and
// the project's name in file names and tool names.
func TestWriteFillsEveryPlaceholder(t *testing.T) {
	for _, lang := range scaffold.Langs {
		for _, sdk := range []string{"", "/src/toolhost/abi/guest"} {
			if lang == "rust" && sdk == "" {
				continue // refused: TestWriteRefuses
			}
			dir := filepath.Join(t.TempDir(), "p")
			written, err := scaffold.Write(scaffold.Options{Name: "my_tool", Lang: lang, Dir: dir,
				Plugins: "/srv/plugins", Toolhost: "/usr/bin/toolhost", SDK: sdk})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range written {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(b), "{{") && filepath.Base(p) != "toolhost.h" {
					t.Errorf("%s/%s: a placeholder is left: %s", lang, filepath.Base(p), b)
				}
				if strings.Contains(filepath.Base(p), "NAME") {
					t.Errorf("%s: file name not filled in: %s", lang, p)
				}
			}
			mk, err := os.ReadFile(filepath.Join(dir, "Makefile"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"PLUGINS  ?= /srv/plugins", "TOOLHOST ?= /usr/bin/toolhost", "my_tool.wasm"} {
				if !strings.Contains(string(mk), want) {
					t.Errorf("%s Makefile lacks %q", lang, want)
				}
			}
			if lang == "rust" {
				toml, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
				if !strings.Contains(string(toml), `toolhost = { path = "`+sdk+`" }`) || !strings.Contains(string(toml), `name = "my_tool"`) {
					t.Errorf("Cargo.toml:\n%s", toml)
				}
			}
			if lang == "go" {
				mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
				hasReplace := strings.Contains(string(mod), "replace github.com/toolhost/toolhost/abi/guest => "+sdk)
				if hasReplace != (sdk != "") || !strings.Contains(string(mod), "abi/guest "+scaffold.SDKVersion) {
					t.Errorf("go.mod with sdk %q:\n%s", sdk, mod)
				}
			}
		}
	}
}

// Bad options are refused with an error of their own, and nothing is
// written over an existing project.
func TestWriteRefuses(t *testing.T) {
	base := scaffold.Options{Name: "ok", Lang: "go", Plugins: "/p", Toolhost: "toolhost"}
	for _, name := range []string{"", "Upper", "1st", "has-dash", "has.dot", strings.Repeat("a", 65)} {
		o := base
		o.Name, o.Dir = name, filepath.Join(t.TempDir(), "x")
		if _, err := scaffold.Write(o); !errors.Is(err, scaffold.ErrName) {
			t.Errorf("name %q: %v, want ErrName", name, err)
		}
		if _, err := os.Stat(o.Dir); err == nil {
			t.Errorf("name %q: %s was created", name, o.Dir)
		}
	}
	o := base
	o.Lang, o.Dir = "cobol", filepath.Join(t.TempDir(), "x")
	var le *scaffold.LangError
	if _, err := scaffold.Write(o); !errors.As(err, &le) || le.Lang != "cobol" {
		t.Errorf("lang cobol: %v, want a LangError", err)
	}

	o = base
	o.Lang, o.Dir = "rust", filepath.Join(t.TempDir(), "x")
	if _, err := scaffold.Write(o); !errors.Is(err, scaffold.ErrRustSDK) {
		t.Errorf("rust without an SDK: %v, want ErrRustSDK", err)
	}

	o = base
	o.Dir = t.TempDir()
	keep := filepath.Join(o.Dir, "main.go")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ee *scaffold.ExistsError
	if _, err := scaffold.Write(o); !errors.As(err, &ee) {
		t.Fatalf("existing folder: %v, want an ExistsError", err)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Fatal("a file of an existing folder was overwritten")
	}
}

// An SDK path with spaces and quotes (and, for Cargo.toml, a backslash,
// which go.mod reads as a Windows path) reaches go.mod and Cargo.toml as
// the same path; one with a control character is refused.
func TestWriteQuotesSDKPaths(t *testing.T) {
	base := filepath.Join(t.TempDir(), `my "sdk" dir`)
	for lang, sdk := range map[string]string{"go": base, "rust": base + `\x`} {
		dir := filepath.Join(t.TempDir(), "p")
		if _, err := scaffold.Write(scaffold.Options{Name: "q", Lang: lang, Dir: dir, Plugins: "/p", Toolhost: "toolhost", SDK: sdk}); err != nil {
			t.Fatal(err)
		}
		var got string
		if lang == "go" {
			out, err := exec.Command("go", "mod", "edit", "-json", filepath.Join(dir, "go.mod")).CombinedOutput()
			if err != nil {
				t.Fatalf("go mod edit: %v\n%s", err, out)
			}
			var mod struct {
				Replace []struct{ New struct{ Path string } }
			}
			if err := json.Unmarshal(out, &mod); err != nil || len(mod.Replace) != 1 {
				t.Fatalf("go.mod: %v %s", err, out)
			}
			got = mod.Replace[0].New.Path
		} else {
			raw, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
			var c struct {
				Dependencies map[string]any `toml:"dependencies"`
			}
			if err := toml.Unmarshal(raw, &c); err != nil {
				t.Fatalf("Cargo.toml: %v\n%s", err, raw)
			}
			dep, _ := c.Dependencies["toolhost"].(map[string]any)
			got, _ = dep["path"].(string)
		}
		if got != sdk {
			t.Errorf("%s: the SDK path reads back as %q, want %q", lang, got, sdk)
		}
	}
	_, err := scaffold.Write(scaffold.Options{Name: "q", Lang: "go", Dir: filepath.Join(t.TempDir(), "p"), SDK: "/a\nreplace x => y"})
	if !errors.Is(err, scaffold.ErrPath) {
		t.Errorf("a path with a newline: %v, want ErrPath", err)
	}
}
