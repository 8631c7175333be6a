package wasmcheck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// module assembles a binary module from its sections, each given as id
// and content (the size is added).
func module(sections ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range sections {
		b = append(b, s[0])
		b = leb(b, uint32(len(s)-1))
		b = append(b, s[1:]...)
	}
	return b
}

func sec(id byte, content ...byte) []byte { return append([]byte{id}, content...) }

// u32max is 4,294,967,295 as unsigned LEB128.
var u32max = []byte{0xff, 0xff, 0xff, 0xff, 0x0f}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestCheckModuleBombs: counts that would make wazero's decoder allocate
// gigabytes are refused before it runs, each within a few kilobytes of
// allocation. Without Check, the first of these kills the process
// ("fatal error: runtime: out of memory": 224 GB for the data segments).
func TestCheckModuleBombs(t *testing.T) {
	cases := []struct {
		name, want string
		wasm       []byte
	}{
		{"data segments", "data section: declares 4294967295 data segments in 0 bytes", module(cat([]byte{11}, u32max))},
		{"code entries", "code section: declares 4294967295 functions", module(cat([]byte{10}, u32max))},
		{"imports", "import section: declares 4294967295 imports", module(cat([]byte{2}, u32max))},
		{"exports", "export section: declares 4294967295 exports", module(cat([]byte{7}, u32max))},
		{"elements", "element section: declares 4294967295 element segments", module(cat([]byte{9}, u32max))},
		{"globals", "global section: declares 4294967295 entries", module(cat([]byte{6}, u32max))},
		{"functions", "function section: declares 4294967295 entries", module(cat([]byte{3}, u32max))},
		{"tables", "table section: declares 4294967295 tables", module(cat([]byte{4}, u32max))},
		{"types", "type section: declares 4294967295 types", module(cat([]byte{1}, u32max))},
		{"params", "type section: declares 4294967295 params", module(cat([]byte{1, 1, 0x60}, u32max))},
		{"import name", "import section: declares 4294967295 import module bytes", module(cat([]byte{2, 1}, u32max))},
		{"data bytes", "data section: declares 4294967295 data segment bytes", module(cat([]byte{11, 1, 1}, u32max))},
		{"element indices", "element section: declares 4294967295 function indices", module(cat([]byte{9, 1, 1, 0}, u32max))},
		{"element exprs", "element section: declares 4294967295 element expressions", module(cat([]byte{9, 1, 5, 0x70}, u32max))},
		{"function names", "custom section: declares 4294967295 function names", module(cat([]byte{0, 4, 'n', 'a', 'm', 'e', 1, 5}, u32max))},
		{"local names", "custom section: declares 4294967295 locals", module(cat([]byte{0, 4, 'n', 'a', 'm', 'e', 2, 7, 1, 0}, u32max))},
		{"section size", "code section: declares 4294967295 bytes", module()[:8:8]},
		{"locals", "code section: a function declares more than 50000 locals", module(cat([]byte{10, 1, 8, 1}, u32max, []byte{0x7f, 0x0b}))},
	}
	cases[16].wasm = cat(cases[16].wasm, []byte{10}, u32max)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := Check(tc.wasm)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %d bytes, %v; want an error containing %q", len(out), err, tc.want)
			}
			if tc.name != "locals" && !errors.Is(err, errMalformed) {
				t.Errorf("%v does not wrap errMalformed", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
				t.Errorf("checking %d bytes allocated %d bytes", len(tc.wasm), grew)
			}
		})
	}
}

// TestCheckModuleValid: the repository's modules, Go and hand-written,
// pass; a Go module's table (which has no maximum) is fixed at its size;
// and what Check returns compiles and is checked unchanged.
func TestCheckModuleValid(t *testing.T) {
	paths := []string{testwasm.Go(t, "./host/testdata/misbehave"), testwasm.Go(t, "./tools-src/text")}
	// The host's WAT fixtures: every shape of module the host loads.
	wats, _ := filepath.Glob(filepath.Join("..", "..", "host", "testdata", "wat", "*.wat"))
	if len(wats) == 0 {
		t.Fatal("no WAT fixtures found in host/testdata/wat")
	}
	for _, w := range wats {
		paths = append(paths, testwasm.WAT(t, "host/testdata/wat/"+filepath.Base(w)))
	}
	ctx := context.Background()
	// The interpreter decodes and validates as the compiler does, in a
	// fraction of the time.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for _, p := range paths {
		wasm, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Check(wasm)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
			continue
		}
		if _, err := rt.CompileModule(ctx, out); err != nil {
			t.Errorf("%s: the checked module does not compile: %v", filepath.Base(p), err)
		}
		if again, err := Check(out); err != nil || !bytes.Equal(again, out) {
			t.Errorf("%s: checking the checked module changed it again (%v)", filepath.Base(p), err)
		}
		if strings.Contains(p, "misbehave") && len(out) == len(wasm) {
			t.Errorf("%s: the Go module's table was not given a maximum", filepath.Base(p))
		}
	}
}

// TestCheckModuleTables: tables are capped at MaxTableEntries in all, and
// cannot grow past it: a table without a maximum gets its minimum.
func TestCheckModuleTables(t *testing.T) {
	table := func(flag byte, minmax ...uint32) []byte {
		b := []byte{0x70, flag}
		for _, v := range minmax {
			b = leb(b, v)
		}
		return b
	}
	tables := func(ts ...[]byte) []byte {
		return module(cat(append([][]byte{{4}, leb(nil, uint32(len(ts)))}, ts...)...))
	}
	cases := []struct {
		name string
		in   []byte
		want []byte // nil: unchanged
		err  string
	}{
		{"fixed", tables(table(1, 10, 10)), nil, ""},
		{"growable within the cap", tables(table(1, 10, 1000)), nil, ""},
		{"no maximum", tables(table(0, 7022)), tables(table(1, 7022, 7022)), ""},
		{"maximum over the cap", tables(table(1, 10, 1<<27)), tables(table(1, 10, MaxTableEntries)), ""},
		{"budget shared in order", tables(table(1, 0, 1<<20), table(1, 5, 100)), tables(table(1, 0, 1<<20-5), table(1, 5, 5)), ""},
		{"minimum over the cap", tables(table(0, 1<<27)), nil, "its tables have 134217728 entries at start, over the host's limit of 1048576"},
		{"minima over the cap together", tables(table(1, 1<<19, 1<<19), table(1, 1<<19+1, 1<<19+1)), nil, "1048577 entries at start"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Check(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, errMalformed) {
					t.Fatalf("err = %v; want a limit error containing %q", err, tc.err)
				}
				return
			}
			want := tc.want
			if want == nil {
				want = tc.in
			}
			if err != nil || !bytes.Equal(out, want) {
				t.Fatalf("Check = % x, %v; want % x", out, err, want)
			}
		})
	}
}

// TestCheckModuleHostMemory: issue 10 finding 2. What every instance
// allocates on the host outside its linear memory (globals, element
// items and segments, tables, data segments) is counted at load against
// MaxHostBytes. Before, a 4 MB module of passive element segments cost
// ~157 MiB of host heap per instance, and a million globals ~90 MiB.
func TestCheckModuleHostMemory(t *testing.T) {
	vec := func(n int, item ...byte) []byte {
		b := leb(nil, uint32(n))
		for range n {
			b = append(b, item...)
		}
		return b
	}
	types, funcs, code := sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 2, 0, 0x0b)
	table := func(n uint32) []byte { return cat([]byte{4, 1, 0x70, 1}, leb(nil, n), leb(nil, n)) }
	cases := []struct {
		name, want string
		wasm       []byte
	}{
		{"globals", "200000 globals × 88 B", module(types, funcs, cat([]byte{6}, vec(200000, 0x7f, 1, 0x41, 0, 0x0b)), code)},
		{"passive element items", "400000 element items × 42 B", module(types, funcs, cat([]byte{9, 1, 1, 0}, vec(400000, 0)), code)},
		{"element expressions", "400000 element items", module(types, funcs, cat([]byte{9, 1, 5, 0x70}, vec(400000, 0xd2, 0, 0x0b)), code)},
		{"element segments", "250000 element segments × 32 B", module(types, funcs, cat([]byte{9}, vec(250000, 1, 0, 1, 0)), code)},
		{"data segments", "800000 data segments × 24 B", module(types, funcs, code, cat([]byte{11}, vec(800000, 1, 1, 7)))},
		{"together", "1048576 table entries × 8 B", module(types, funcs, table(MaxTableEntries), cat([]byte{6}, vec(100000, 0x7f, 1, 0x41, 0, 0x0b)), code)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(tc.wasm)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "over the host's limit of 16 MiB") {
				t.Fatalf("Check(%d bytes) = %v; want a host-memory refusal naming %q", len(tc.wasm), err, tc.want)
			}
			if errors.Is(err, errMalformed) {
				t.Errorf("%v: a valid module over a limit is not malformed", err)
			}
		})
	}
	// Just under the limit loads: the cap is a budget, not a ban.
	under := module(types, funcs, cat([]byte{6}, vec(MaxHostBytes/hostBytesPerGlobal, 0x7f, 1, 0x41, 0, 0x0b)), code)
	if _, err := Check(under); err != nil {
		t.Fatalf("globals within the budget: %v", err)
	}
}
