package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/transport"
)

// Over HTTP from the real binary: every listed schema is an object schema
// without boolean subschemas (json.get's any-typed output included),
// openWorldHint follows the config file's egress grant, destructiveHint
// the manifests, and icons pass through.
func TestE2ESchemasAndHints(t *testing.T) {
	egress := testwasm.Go(t, "./host/testdata/egress")
	plugins := testwasm.Dir(t,
		testwasm.Go(t, "./tools-src/jsontools"),
		egress,
		testwasm.WAT(t, "host/testdata/wat/boolschema.wat"),
		testwasm.WAT(t, "host/testdata/wat/garbage.wat"),
	)
	cfg := filepath.Join(t.TempDir(), "toolhost.toml")
	grant := fmt.Sprintf("[grants.%q]\nhosts = [\"example.com\"]\n", filepath.Base(egress))
	if err := os.WriteFile(cfg, []byte(grant), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, plugins, "--config", cfg)
	res, err := srv.client(t).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	hints := map[string]struct{ destructive, openWorld bool }{}
	icons := map[string]int{}
	for _, tl := range res.Tools {
		name, _ := tl.Meta[transport.MetaToolName].(string) // the manifest name
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
				t.Errorf("%s: %s schema has a boolean at %s: %s", tl.Name, which, p, b)
			}
		}
		if a := tl.Annotations; a != nil && a.DestructiveHint != nil && a.OpenWorldHint != nil {
			hints[name] = struct{ destructive, openWorld bool }{*a.DestructiveHint, *a.OpenWorldHint}
		}
		icons[name] = len(tl.Icons)
	}
	want := map[string]struct{ destructive, openWorld bool }{
		"json.get":       {false, false}, // read-only
		"egress.fetch":   {true, true},   // not read-only; granted egress
		"wat.boolschema": {false, false},
		"wat.garbage":    {true, false}, // not read-only, no destructive: MCP's default
	}
	for name, w := range want {
		if got, ok := hints[name]; !ok || got != w {
			t.Errorf("%s: hints %+v (listed with both: %v), want %+v", name, got, ok, w)
		}
	}
	if icons["wat.boolschema"] != 1 {
		t.Errorf("wat.boolschema listed with %d icons, want 1", icons["wat.boolschema"])
	}
}
