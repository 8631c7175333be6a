package loader_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// wireNames lists the registry as manifest=wire pairs, hidden ones marked.
func wireNames(reg *registry.Registry) string {
	var ns []string
	for _, t := range reg.List() {
		n := t.Name + "=" + t.WireName
		if t.Hidden {
			n += "(hidden)"
		}
		ns = append(ns, n)
	}
	return strings.Join(ns, " ")
}

// Two modules whose tools map to one wire name: the later file is refused
// at load, the reason naming both tools and the earlier file; the operator
// resolves it with a prefix, a name, hiding, or exact names.
func TestWireNameClashAtLoad(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")       // wat.echo
	clash := testwasm.WAT(t, "host/testdata/wat/wireclash.wat") // wat_echo
	dir := t.TempDir()
	copyFile(t, echo, filepath.Join(dir, "a-echo.wasm"))
	copyFile(t, clash, filepath.Join(dir, "b-clash.wasm"))

	res, err := loader.Load(ctx, rt, dir, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := wireNames(res.Registry); got != "wat.echo=wat_echo" {
		t.Errorf("registry = %s, want only a-echo.wasm's tool", got)
	}
	if len(res.Errors) != 1 || filepath.Base(res.Errors[0].Path) != "b-clash.wasm" {
		t.Fatalf("errors = %v, want b-clash.wasm refused", res.Errors)
	}
	reason := res.Errors[0].Reason
	for _, want := range []string{`tools "wat.echo" and "wat_echo" would both be listed as "wat_echo"`, filepath.Join(dir, "a-echo.wasm")} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q does not name %s", reason, want)
		}
	}

	fix := []struct {
		name string
		opts loader.Options
		want string
	}{
		{"module prefix", loader.Options{Prefixes: map[string]string{"b-clash.wasm": "b_"}}, "wat.echo=wat_echo wat_echo=b_wat_echo"},
		{"operator name", loader.Options{Overrides: map[string]loader.Override{"wat.echo": {WireName: "echo"}}}, "wat.echo=echo wat_echo=wat_echo"},
		{"hidden", loader.Options{Overrides: map[string]loader.Override{"wat.echo": {Expose: new(false)}}}, "wat.echo=wat_echo(hidden) wat_echo=wat_echo"},
		{"exact names", loader.Options{ExactNames: true}, "wat.echo=wat.echo wat_echo=wat_echo"},
	}
	for _, f := range fix {
		t.Run(f.name, func(t *testing.T) {
			res, err := loader.Load(ctx, rt, dir, f.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) != 0 {
				t.Fatalf("errors: %v", res.Errors)
			}
			if got := wireNames(res.Registry); got != f.want {
				t.Errorf("registry = %s, want %s", got, f.want)
			}
		})
	}
}

// Hot reload keeps the serving set consistent: a module added later whose
// wire name clashes is refused, and the tools serving keep serving.
func TestWireNameClashOnReload(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	dir := t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "z-echo.wasm"))
	live, err := loader.Open(ctx, rt, dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	// Added later, though first in file order: the module already serving
	// keeps its name.
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/wireclash.wat"), filepath.Join(dir, "a-clash.wasm"))
	ch, err := live.Rescan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Errors) != 1 || filepath.Base(ch.Errors[0].Path) != "a-clash.wasm" || !strings.Contains(ch.Errors[0].Reason, "z-echo.wasm") {
		t.Fatalf("rescan errors = %v, want a-clash.wasm refused naming z-echo.wasm", ch.Errors)
	}
	if got := wireNames(live.Registry()); got != "wat.echo=wat_echo" {
		t.Errorf("registry after the refused reload = %s", got)
	}
}

// A module whose own tools share a wire name, or whose wire name falls in
// toolhost's namespace, is refused on its own.
func TestWireNameRefusals(t *testing.T) {
	rt := newRuntime(t)
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/selfclash.wat"), testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	res, err := loader.Load(context.Background(), rt, dir, loader.Options{
		Overrides: map[string]loader.Override{"wat.echo": {WireName: "toolhost_echo"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := wireNames(res.Registry); got != "" {
		t.Errorf("registry = %s, want nothing", got)
	}
	reasons := map[string]string{}
	for _, e := range res.Errors {
		reasons[filepath.Base(e.Path)] = e.Reason
	}
	if r := reasons[filepath.Base(testwasm.WAT(t, "host/testdata/wat/selfclash.wat"))]; !strings.Contains(r, `tools "a.b" and "a_b" would both be listed as "a_b"`) {
		t.Errorf("selfclash reason = %q", r)
	}
	if r := reasons[filepath.Base(testwasm.WAT(t, "host/testdata/wat/echo.wat"))]; !strings.Contains(r, `wire name "toolhost_echo" starts with "toolhost_", reserved`) {
		t.Errorf("echo reason = %q", r)
	}
}

// The operator's description replaces the manifest's; the identity stays.
func TestViewOverrides(t *testing.T) {
	rt := newRuntime(t)
	dir := t.TempDir()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "echo.wasm"))
	res, err := loader.Load(context.Background(), rt, dir, loader.Options{
		Overrides: map[string]loader.Override{"wat.echo": {Description: "Echoes, says the operator."}},
		Prefixes:  map[string]string{"echo.wasm": "w-"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tl, ok := res.Registry.Lookup("wat.echo")
	if !ok {
		t.Fatalf("wat.echo not loaded: %v", res.Errors)
	}
	if tl.Description != "Echoes, says the operator." {
		t.Errorf("description %q", tl.Description)
	}
	if tl.WireName != "w-wat_echo" {
		t.Errorf("wire name %q (prefix by file name %s)", tl.WireName, tl.Module.Path)
	}
}

// Modules loaded by a hot reload get the operator's views as those loaded
// at start do.
func TestViewsOnReload(t *testing.T) {
	ctx := context.Background()
	rt := newRuntime(t)
	dir := t.TempDir()
	live, err := loader.Open(ctx, rt, dir, loader.Options{
		Overrides: map[string]loader.Override{"wat.echo": {Expose: new(false)}},
		Prefixes:  map[string]string{"b.wasm": "p_"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), filepath.Join(dir, "a.wasm"))
	copyFile(t, testwasm.WAT(t, "host/testdata/wat/wireclash.wat"), filepath.Join(dir, "b.wasm"))
	ch, err := live.Rescan(ctx)
	if err != nil || len(ch.Errors) != 0 {
		t.Fatalf("rescan: %v %v", err, ch.Errors)
	}
	if got := wireNames(live.Registry()); got != "wat.echo=wat_echo(hidden) wat_echo=p_wat_echo" {
		t.Errorf("registry after reload = %s", got)
	}
}
