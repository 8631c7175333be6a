package loader_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/transport"
)

// Every example module (tools-src/*, and tools-src-c/* when clang is
// there) and every fixture tool module that
// loads has its schemas in normal form after load, and an MCP client is
// served object schemas only, whatever SDK (or none) wrote them; hints
// follow the manifest and the egress grant. A module whose schema cannot
// be served is refused, naming the module, the tool and the JSON Pointer.
func TestLoadedSchemasAreServedAsObjects(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	examples, err := os.ReadDir(filepath.Join(testwasm.Root(t), "tools-src"))
	if err != nil {
		t.Fatal(err)
	}
	exampleFiles := map[string]bool{}
	for _, e := range examples {
		// internal holds the examples' test harness, not a tool.
		if e.IsDir() && e.Name() != "internal" {
			copyFile(t, testwasm.Go(t, "./tools-src/"+e.Name()), filepath.Join(dir, e.Name()+".wasm"))
			exampleFiles[e.Name()+".wasm"] = true
		}
	}
	if len(exampleFiles) < 4 {
		t.Fatalf("found %d example modules", len(exampleFiles))
	}
	// The C examples, where clang can build them (a subtest, so that
	// without clang only it is skipped).
	cExamples, _ := filepath.Glob(filepath.Join(testwasm.Root(t), "tools-src-c", "*"))
	for _, d := range cExamples {
		name := filepath.Base(d)
		t.Run("build C "+name, func(t *testing.T) {
			copyFile(t, testwasm.C(t, "tools-src-c/"+name), filepath.Join(dir, "c-"+name+".wasm"))
			exampleFiles["c-"+name+".wasm"] = true
		})
	}
	for _, pkg := range []string{"egress", "misbehave"} {
		copyFile(t, testwasm.Go(t, "./host/testdata/"+pkg), filepath.Join(dir, "fixture-"+pkg+".wasm"))
	}
	wats, _ := filepath.Glob(filepath.Join(testwasm.Root(t), "host/testdata/wat/*.wat"))
	for _, w := range wats {
		name := strings.TrimSuffix(filepath.Base(w), ".wat")
		if name == "describeloop" { // runs until the describe timeout: nothing to see here
			continue
		}
		copyFile(t, testwasm.WAT(t, "host/testdata/wat/"+name+".wat"), filepath.Join(dir, "wat-"+name+".wasm"))
	}

	rt, err := host.New(ctx, host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), Logger: slog.New(slog.DiscardHandler),
		Egress: toolhostv1.Egress{Grants: map[string]toolhostv1.Grant{"fixture-egress.wasm": {Hosts: []string{"example.com"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	res, err := loader.Load(ctx, rt, dir, loader.Options{Check: transport.CheckTool})
	if err != nil {
		t.Fatal(err)
	}

	refused := map[string]string{}
	for _, le := range res.Errors {
		refused[filepath.Base(le.Path)] = le.Error()
	}
	for f := range exampleFiles {
		if why, ok := refused[f]; ok {
			t.Errorf("example %s refused: %s", f, why)
		}
	}
	bad := refused["wat-badschema.wasm"]
	for _, want := range []string{filepath.Join(dir, "wat-badschema.wasm"), `tool "wat.badschema"`, "input_schema at /properties/doc/anyOf/1", "got a number"} {
		if !strings.Contains(bad, want) {
			t.Errorf("badschema refused with %q, want it to name %q", bad, want)
		}
	}

	loaded := map[string]bool{}
	for _, tl := range res.Registry.List() {
		loaded[filepath.Base(tl.Module.Path)] = true
		for _, s := range [][]byte{tl.InputSchema, tl.OutputSchema} {
			if len(s) == 0 {
				continue
			}
			if p, found := abi.FirstBooleanPropertySchema(s); found {
				t.Errorf("%s: boolean subschema at %s after load: %s", tl.Name, p, s)
			}
			if again, err := abi.NormalizeSchema(s); err != nil || string(again) != string(s) {
				t.Errorf("%s: schema not in normal form after load: %s (%v)", tl.Name, s, err)
			}
		}
		if want := filepath.Base(tl.Module.Path) == "fixture-egress.wasm"; tl.OpenWorld != want {
			t.Errorf("%s: OpenWorld %v, want %v", tl.Name, tl.OpenWorld, want)
		}
	}
	for _, f := range []string{"fixture-egress.wasm", "fixture-misbehave.wasm", "wat-boolschema.wasm"} {
		if !loaded[f] {
			t.Errorf("fixture %s did not load: %s", f, refused[f])
		}
	}

	// What a client sees.
	listed := listTools(t, res)
	if len(listed) != len(res.Registry.List()) {
		t.Errorf("listed %d tools, the registry has %d", len(listed), len(res.Registry.List()))
	}
	for _, tl := range listed {
		for which, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
			if s == nil {
				continue
			}
			b, _ := json.Marshal(s)
			var top map[string]any
			if err := json.Unmarshal(b, &top); err != nil || top["type"] != "object" {
				t.Errorf("%s: %s schema %s is not an object schema", tl.Name, which, b)
			}
			if p, found := abi.FirstBooleanPropertySchema(b); found {
				t.Errorf("%s: %s schema served with a boolean at %s", tl.Name, which, p)
			}
		}
		if tl.Annotations == nil || tl.Annotations.OpenWorldHint == nil || tl.Annotations.DestructiveHint == nil {
			t.Errorf("%s: hints not all set: %+v", tl.Name, tl.Annotations)
		}
	}
	if get := listed["json.get"]; get == nil || get.OutputSchema == nil {
		t.Error("json.get is not listed with its output schema")
	}
	if b := listed["wat.boolschema"]; b == nil || len(b.Icons) != 1 || b.Icons[0].Source != "https://example.com/bool.png" {
		t.Errorf("wat.boolschema is not listed with its icon: %+v", b)
	}
}

func listTools(t *testing.T, res *loader.Result) map[string]*mcp.Tool {
	t.Helper()
	srv := transport.New(dispatcher.New(res.Live, dispatcher.Config{}), res.Registry, transport.Options{Logger: slog.New(slog.DiscardHandler)})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "schemas-test", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	out := map[string]*mcp.Tool{} // by manifest name
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		name, _ := tl.Meta[transport.MetaToolName].(string)
		out[name] = tl
	}
	return out
}

// The operator's read_only override keeps destructiveHint truthful: a tool
// made read-only is not destructive; a read-only tool made writable takes
// MCP's default (destructive) as its manifest declared none.
func TestRecordDestructiveFollowsOverride(t *testing.T) {
	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: "off", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	load := func(name string) (*host.Module, abi.Tool) {
		m, err := rt.LoadFile(ctx, testwasm.WAT(t, "host/testdata/wat/"+name+".wat"))
		if err != nil {
			t.Fatal(err)
		}
		return m, m.Tools[0]
	}
	yes, no := true, false
	writer, wt := load("garbage")     // not read-only: destructive by default
	reader, rdt := load("boolschema") // read-only
	tests := []struct {
		name string
		m    *host.Module
		t    abi.Tool
		o    loader.Override
		want bool
	}{
		{"writer as declared", writer, wt, loader.Override{}, true},
		{"writer made read-only", writer, wt, loader.Override{ReadOnly: &yes}, false},
		{"reader as declared", reader, rdt, loader.Override{}, false},
		{"reader made writable", reader, rdt, loader.Override{ReadOnly: &no}, true},
	}
	for _, tt := range tests {
		if got := loader.Record(tt.m, tt.t, tt.o).Destructive; got != tt.want {
			t.Errorf("%s: Destructive %v, want %v", tt.name, got, tt.want)
		}
	}
	// The other manifest fields reach the record as declared.
	if rec := loader.Record(reader, rdt, loader.Override{}); rec.Instances != abi.InstancesReuse ||
		len(rec.Icons) != 1 || rec.Icons[0].Src != "https://example.com/bool.png" {
		t.Errorf("boolschema: instances %q icons %+v", rec.Instances, rec.Icons)
	}
	if rec := loader.Record(writer, wt, loader.Override{}); rec.Instances != abi.InstancesFresh || rec.Icons != nil {
		t.Errorf("garbage: instances %q icons %+v", rec.Instances, rec.Icons)
	}
}
