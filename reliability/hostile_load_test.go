package reliability_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
)

// Load-time hostile modules: each is dropped into a plugins folder that is
// serving echo.wat, and a rescan must refuse it with a load error that
// says why, leave echo serving, and release whatever the attempt cost.

// TestHostileInfiniteLoopInDescribe: toolhost_describe never returns; the
// load gives up at the describe timeout (500 ms in the rig).
func TestHostileInfiniteLoopInDescribe(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		start := time.Now()
		reason := r.mustRefuse("describeloop.wasm", read(t, hostWAT(t, "describeloop")))
		if took := time.Since(start); took > 500*time.Millisecond+slack {
			t.Errorf("refusing took %v", took)
		}
		wantIn(t, reason, "toolhost_describe did not return within 500ms")
	})
}

// TestHostileDataSegment: a data segment larger than the memory limit.
// The rig's limit is 4 MiB (the smallest the config file allows) so that
// the segment, 5 MiB, is generated in a moment. Either the module's
// initial memory holds the segment and is over the limit, or it does not
// and instantiation traps; both refuse the module.
func TestHostileDataSegment(t *testing.T) {
	const limit = 4 << 20
	seg := bytes.Repeat([]byte("x"), 5<<20)
	cases := []struct {
		name  string
		pages int
		off   int
		want  string
	}{
		{"memory-fits-segment", 5<<20/65536 + 1, 65536, "needs 5308416 bytes of memory at start, over the 4194304-byte limit"},
		{"memory-too-small", 1, 65536, "out of bounds memory access"},
		// Past the server-wide 64 MiB at the default limits: the segment
		// is small, its offset is not.
		{"offset-past-64MiB", 1, 64 << 20, "out of bounds memory access"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := rigConfig{Limits: host.Limits{MemoryBytes: limit}}
			data := seg
			if tc.off >= 64<<20 {
				cfg, data = rigConfig{}, []byte("beyond")
			}
			hostile(t, cfg, func(r *rig) {
				wasm := assemble(t, "dataseg", module{Pages: tc.pages, Manifest: manifest("wat.dataseg"),
					Response: []byte(`{"result":1}`), Data: map[int][]byte{tc.off: data}})
				wantIn(t, r.mustRefuse("dataseg.wasm", read(t, wasm)), tc.want)
			})
		})
	}
}

// TestHostileToolNames: names outside ^[A-Za-z0-9_.-]{1,128}$ are refused
// at load, naming the rule; calls naming such tools are not_found.
func TestHostileToolNames(t *testing.T) {
	names := []string{"bad name", "", strings.Repeat("a", 129), "tool\x00", "../../etc/passwd",
		"tööl", "\u202etool", "a\nb", "<script>", "x;rm -rf /", "ⓣⓞⓞⓛ", "tool\"quote"}
	for _, name := range names {
		t.Run(strings.ToValidUTF8(name, "?"), func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				wasm := assemble(t, "name", module{Manifest: manifest(name), Response: []byte(`{"result":1}`)})
				wantIn(t, r.mustRefuse("name.wasm", read(t, wasm)), "does not match ^[A-Za-z0-9_.-]{1,128}$")
				r.fails(r.call(name, `{}`, dispatcher.Options{}), dispatcher.KindNotFound, "no tool named")
			})
		})
	}
	// Invalid UTF-8 in the manifest (here, in a name) is refused as such.
	t.Run("invalid-utf8", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			m := []byte(`{"abi":1,"tools":[{"name":"t` + "\xff" + `","input_schema":{"type":"object"}}]}`)
			wasm := assemble(t, "name", module{Manifest: m, Response: []byte(`{"result":1}`)})
			wantIn(t, r.mustRefuse("name.wasm", read(t, wasm)), "manifest: not valid UTF-8")
		})
	})
}

// TestHostileUnknownImport: a module importing what the host does not
// provide is refused before any of its code runs.
func TestHostileUnknownImport(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		wantIn(t, r.mustRefuse("unknownimport.wasm", read(t, hostWAT(t, "unknownimport"))),
			"imports env.foo, which the host does not provide")
	})
	t.Run("wasi-function-that-does-not-exist", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			wasm := assemble(t, "imp", module{Manifest: manifest("wat.imp"), Response: []byte(`{"result":1}`),
				ImportFuncs: []importFunc{{"wasi_snapshot_preview1", "sock_open_everything"}}})
			wantIn(t, r.mustRefuse("imp.wasm", read(t, wasm)), "sock_open_everything")
		})
	})
}

// TestHostileNotWasm: files that are not WebAssembly at all, or whose
// header is right and the rest a trap for the decoder. The 15-byte
// data-count bomb used to kill the whole process (wazero allocated 224 GB
// for it; see wasmcheck.Check); now it is a load error like the others.
func TestHostileNotWasm(t *testing.T) {
	rnd := rand.New(rand.NewPCG(6, 6))
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(rnd.Uint32())
	}
	echo := read(t, echoWASM(t))
	u32max := "\xff\xff\xff\xff\x0f"
	cases := []struct{ name, data, want string }{
		{"text", "this is text, not wasm", "not a valid WebAssembly module"},
		{"empty", "", "not a valid WebAssembly module"},
		{"elf", "\x7fELF\x02\x01\x01\x00" + strings.Repeat("\x00", 56), "not a valid WebAssembly module"},
		{"wasm-v2-header", "\x00asm\x02\x00\x00\x00", "not a valid WebAssembly module"},
		{"truncated", string(echo[:len(echo)/2]), "not a valid WebAssembly module"},
		{"random-1MiB", string(noise), "not a valid WebAssembly module"},
		{"header-then-noise", "\x00asm\x01\x00\x00\x00" + string(noise[:4096]), "not a valid WebAssembly module"},
		{"data-count-bomb", "\x00asm\x01\x00\x00\x00\x0b\x05" + u32max, "declares 4294967295 data segments in 0 bytes"},
		{"section-size-bomb", "\x00asm\x01\x00\x00\x00\x01" + u32max, "declares 4294967295 bytes"},
		{"locals-bomb", "\x00asm\x01\x00\x00\x00\x0a\x0a\x01\x08\x01" + u32max + "\x7f\x0b", "more than 50000 locals"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				wantIn(t, r.mustRefuse("junk.wasm", []byte(tc.data)), tc.want)
			})
		})
	}
}

// TestHostileTables: tables are host memory outside the linear memory
// cap. A module declaring two tables of 2^27 entries asked for 4 GiB per
// instance; a guest growing a table without a maximum got 2 GiB in one
// table.grow. Both found by this suite; the host now caps tables at
// wasmcheck.MaxTableEntries and fixes a table without a maximum at its size.
func TestHostileTables(t *testing.T) {
	t.Run("huge-at-start", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			wasm := assemble(t, "tables", module{Manifest: manifest("wat.tables"), Response: []byte(`{"result":1}`),
				Tables: []uint32{134217728, 134217728}})
			wantIn(t, r.mustRefuse("tables.wasm", read(t, wasm)), "its tables have 268435456 entries at start, over the host's limit of 1048576")
		})
	})
	t.Run("grow", func(t *testing.T) {
		hostile(t, rigConfig{}, func(r *rig) {
			m := manifest("wat.grow")
			at := align8(manifestAt + len(m))
			// The response is table.grow's result: -1 when refused.
			wasm := assemble(t, "grow", module{Manifest: m, Response: []byte(`{"result":"refused"}`),
				Tables: []uint32{0}, GrowTable: 268435456, Result: pack(at, 20)})
			r.mustLoad("grow.wasm", wasm)
			o := r.call("wat.grow", `{}`, dispatcher.Options{})
			if o.Err != nil || string(o.Result) != `"refused"` {
				t.Fatalf("table.grow by 2^28 = %s, %v; want it refused inside the guest", o.Result, o.Err)
			}
		})
	})
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantIn(t *testing.T, reason, want string) {
	t.Helper()
	t.Logf("load error: %.300s", reason)
	if !strings.Contains(reason, want) {
		t.Fatalf("load error %q does not contain %q", reason, want)
	}
}
