package config

import (
	"testing"
	"time"
)

// TestReuseDocExample keeps the [reuse] example of docs/CONFIG.md valid and
// saying what its comments say.
func TestReuseDocExample(t *testing.T) {
	blocks := configDocExamples(t, "reuse")
	if len(blocks) != 1 {
		t.Fatalf("found %d reuse examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("CONFIG.md", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	r := c.HostReuse()
	if r.MaxPerTool != 4 || r.MaxTotal != 32 || r.MaxUses != 500 || r.IdleTimeout != 30*time.Second || r.MemoryHighWater != 16<<20 {
		t.Errorf("HostReuse = %+v", r)
	}
	if r := c.Tools["db.write"].Reuse; r == nil || *r {
		t.Errorf("db.write reuse = %v, want false", r)
	}
	if m := c.ModuleReuse(); len(m) != 1 || m["legacy.wasm"] {
		t.Errorf("ModuleReuse = %v, want legacy.wasm false", m)
	}
}

func TestReuseErrors(t *testing.T) {
	wantLineError(t, "[reuse]\nmax_uses = 0\n", 2, "must be at least 1")
	wantLineError(t, "[reuse]\nmemory_high_water = \"1KiB\"\n", 2, "below one 64 KiB page")
	wantLineError(t, "[tools.\"t\"]\nreuse = \"no\"\n", 2, "must be true or false")
	wantLineError(t, "[modules.\"m.wasm\"]\nreuse = 1\n", 2, "must be true or false")
	wantLineError(t, "[reuse]\nmax_idle = 3\n", 2, `unknown key "max_idle" in [reuse]`)
}

// TestRuntimeDocExample keeps the [runtime] example of docs/CONFIG.md valid
// and saying what its comments say.
func TestRuntimeDocExample(t *testing.T) {
	blocks := configDocExamples(t, "runtime")
	if len(blocks) != 1 {
		t.Fatalf("found %d runtime examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("CONFIG.md", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	r := c.Runtime
	if r.Lazy == nil || !*r.Lazy || r.WarmUp == nil || !*r.WarmUp || r.Interpret == nil || !*r.Interpret || r.MaxResident == nil || *r.MaxResident != 12 || r.MaxFresh == nil || *r.MaxFresh != 4 {
		t.Errorf("Runtime = %+v", r)
	}
	if (&Config{}).Runtime.Lazy != nil {
		t.Error("an absent key is not nil")
	}
}

func TestRuntimeErrors(t *testing.T) {
	wantLineError(t, "[runtime]\nmax_fresh = -1\n", 2, "must be 0 (no bound) or more, not -1")
	wantLineError(t, "[runtime]\nmax_resident = \"4\"\n", 2, "must be a whole number")
	wantLineError(t, "[runtime]\nlazy = 1\n", 2, "must be true or false")
	wantLineError(t, "[runtime]\nwarmup = true\n", 2, `unknown key "warmup" in [runtime]`)
}

// TestSnapshotDocExample keeps the snapshot example of docs/CONFIG.md
// valid and saying what its comment says.
func TestSnapshotDocExample(t *testing.T) {
	blocks := configDocExamples(t, "snapshot")
	if len(blocks) != 1 {
		t.Fatalf("found %d snapshot examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("CONFIG.md", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if m := c.ModuleSnapshot(); len(m) != 1 || !m["search.wasm"] {
		t.Errorf("ModuleSnapshot = %v, want search.wasm", m)
	}
	c, err = Parse("off.toml", []byte("[modules.\"a.wasm\"]\nsnapshot = false\n[modules.\"b.wasm\"]\nprefix = \"b_\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m := c.ModuleSnapshot(); m != nil {
		t.Errorf("ModuleSnapshot = %v, want none", m)
	}
	wantLineError(t, "[modules.\"m.wasm\"]\nsnapshot = \"yes\"\n", 2, "must be true or false")
}
