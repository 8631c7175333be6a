package reliability_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/host"
)

// Call-time hostile modules: each loads, then misbehaves when called. The
// dispatcher must answer with the right kind, promptly, and the rig must
// keep serving (hostile checks a good call and the memory baseline).

// deadline is the per-attempt timeout the runaway cases run under, and
// slack what a loaded (or -race) machine may add before the call returns:
// this checks the guest is stopped at its deadline, not a speed target.
const (
	deadline = 100 * time.Millisecond
	slack    = 2 * time.Second
)

// timed runs one call and checks it returned within max.
func (r *rig) timed(max time.Duration, tool, args string, opts dispatcher.Options) dispatcher.Outcome {
	r.t.Helper()
	start := time.Now()
	o := r.call(tool, args, opts)
	if took := time.Since(start); took > max {
		r.t.Errorf("%s returned after %v; want within %v", tool, took, max)
	} else {
		r.t.Logf("%s returned after %v", tool, took.Round(time.Millisecond))
	}
	return o
}

func TestHostileInfiniteLoopInCall(t *testing.T) {
	cases := []struct{ name, file, tool, wasm string }{
		{"wat", "callloop.wasm", "wat.callloop", "callloop"},
		{"go", "misbehave.wasm", "spin", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				r.mustLoad(tc.file, pick(t, tc.wasm))
				o := r.timed(deadline+slack, tc.tool, `{}`, dispatcher.Options{Timeout: deadline})
				r.fails(o, dispatcher.KindTimeout, "did not finish within 100ms")
			})
		})
	}
}

// pick is our WAT fixture name, or the misbehave module for "".
func pick(t *testing.T, wat string) string {
	if wat == "" {
		return misbehaveWASM(t)
	}
	return ourWAT(t, wat)
}

// TestHostileSleepPastDeadline: a guest asleep in WASI poll_oneoff for ten
// minutes is woken at its 100 ms deadline (the host's sleeper watches the
// call's context), not when its sleep ends.
func TestHostileSleepPastDeadline(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		r.mustLoad("misbehave.wasm", misbehaveWASM(t))
		o := r.timed(deadline+slack, "sleep", `{"ms":600000}`, dispatcher.Options{Timeout: deadline})
		r.fails(o, dispatcher.KindTimeout, "did not finish within 100ms")
	})
}

// TestHostileMemoryGrowth: a guest that allocates without end gets linear
// memory up to the cap (64 MiB by default, 16 MiB per tool here as well)
// and then no more: the Go runtime dies with "out of memory", a bare
// module's memory.grow returns -1. Both are internal errors.
func TestHostileMemoryGrowth(t *testing.T) {
	cases := []struct {
		name, file, tool, wasm, want string
		lim                          host.Limits
	}{
		{"go/default-cap", "misbehave.wasm", "grow", "", "fatal error: out of memory", host.Limits{}},
		{"go/16MiB-cap", "misbehave.wasm", "grow", "", "fatal error: out of memory", host.Limits{MemoryBytes: 16 << 20}},
		{"wat/default-cap", "growloop.wasm", "wat.growloop", "growloop", "wasm error: unreachable", host.Limits{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{Limits: tc.lim}, func(r *rig) {
				r.mustLoad(tc.file, pick(t, tc.wasm))
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				o := r.timed(30*time.Second, tc.tool, `{}`, dispatcher.Options{})
				r.fails(o, dispatcher.KindInternal, tc.want)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				// The guest's memory is Go heap the host allocates, at most
				// the cap once plus the geometric growth's last copy.
				capBytes := host.DefaultMemoryLimit
				if tc.lim.MemoryBytes > 0 {
					capBytes = int(tc.lim.MemoryBytes)
				}
				grew := after.TotalAlloc - before.TotalAlloc
				r.t.Logf("host allocated %s during the call (cap %s)", mib(grew), mib(uint64(capBytes)))
				if grew > uint64(3*capBytes) {
					r.t.Errorf("the call allocated %s of host memory for a %s guest cap", mib(grew), mib(uint64(capBytes)))
				}
			})
		})
	}
}

// TestHostileDeepRecursion: unbounded recursion ends in a stack overflow,
// whether the Go runtime notices it (fatal error, then the unreachable
// trap) or wazero does (its call stack ceiling), and is an internal error.
func TestHostileDeepRecursion(t *testing.T) {
	cases := []struct{ name, file, tool, wasm, want string }{
		{"go", "misbehave.wasm", "recurse", "", "stack overflow"},
		{"wat", "recurse.wasm", "wat.recurse", "recurse", "stack overflow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				r.mustLoad(tc.file, pick(t, tc.wasm))
				o := r.timed(30*time.Second, tc.tool, `{}`, dispatcher.Options{})
				r.fails(o, dispatcher.KindInternal, tc.want)
			})
		})
	}
}

// TestHostileStdoutFlood: 100 MiB written to stdout costs the host the
// 64 KiB it keeps for the log and a count of the rest; the call itself
// succeeds (output is not an error) and the log says how much was dropped.
func TestHostileStdoutFlood(t *testing.T) {
	const flood = 100 << 20
	cases := []struct{ name, file, tool, wasm, args, result string }{
		{"wat", "flood.wasm", "wat.flood", "flood", `{}`, `"flooded"`},
		{"go", "guest.wasm", "guest.flood", "", fmt.Sprintf(`{"n":%d}`, flood), fmt.Sprint(flood)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hostile(t, rigConfig{}, func(r *rig) {
				wasm := guestWASM(t)
				if tc.wasm != "" {
					wasm = ourWAT(t, tc.wasm)
				}
				r.mustLoad(tc.file, wasm)
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				o := r.timed(30*time.Second, tc.tool, tc.args, dispatcher.Options{})
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				if o.Err != nil || string(o.Result) != tc.result {
					r.t.Fatalf("flood = %s, %v; want %s", o.Result, o.Err, tc.result)
				}
				want := fmt.Sprintf(`"dropped_bytes":%d`, flood-host.DefaultLogLimit)
				if !strings.Contains(r.logs.String(), want) {
					r.t.Errorf("log has no %s:\n%.500s", want, r.logs.String())
				}
				// 100 MiB passed through the host; only the kept 64 KiB (and
				// the instance's own memory) may have been allocated for it.
				grew := after.TotalAlloc - before.TotalAlloc
				r.t.Logf("host allocated %s during the call", mib(grew))
				if grew > 32<<20 {
					r.t.Errorf("writing 100 MiB of output allocated %s on the host", mib(grew))
				}
			})
		})
	}
}

// TestHostileSandboxEscape: a guest reaching for the host's files,
// folders, environment and arguments finds none of them (wazero grants
// none unless asked, and the host asks for none).
func TestHostileSandboxEscape(t *testing.T) {
	hostile(t, rigConfig{}, func(r *rig) {
		r.mustLoad("guest.wasm", guestWASM(t))
		o := r.call("guest.escape", `{}`, dispatcher.Options{})
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		t.Logf("the guest saw: %s", o.Result)
		var rep struct {
			Args, Env []string
			Passwd    string `json:"read_etc_passwd"`
			Root      string `json:"list_root"`
			Write     string `json:"write_tmp"`
			Cwd       string `json:"getwd"`
			Hostname  string `json:"hostname"`
		}
		if err := json.Unmarshal(o.Result, &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Args) != 0 || len(rep.Env) != 0 {
			t.Errorf("the guest sees arguments %q and environment %q", rep.Args, rep.Env)
		}
		for what, got := range map[string]string{"reading /etc/passwd": rep.Passwd, "listing /": rep.Root, "writing /tmp": rep.Write} {
			if !strings.HasPrefix(got, "error: ") {
				t.Errorf("%s: %.100s; want an error", what, got)
			}
		}
	})
}
