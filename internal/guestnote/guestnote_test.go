package guestnote

import (
	"bytes"
	"github.com/toolhost/toolhost/internal/printable"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
)

// memory is a guest memory of plain bytes.
type memory []byte

func (m memory) Size() uint32 { return uint32(len(m)) }
func (m memory) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m)) {
		return nil, false
	}
	return m[off : off+n], true
}

// recorder is a Sink that keeps what it is given.
type recorder struct {
	progress []progressNote
	logs     []string
}

func (r *recorder) Progress(done, total float64, msg string) {
	r.progress = append(r.progress, progressNote{done, total, msg})
}
func (r *recorder) Log(level abi.LogLevel, msg string) {
	r.logs = append(r.logs, level.String()+": "+msg)
}

// clock is a settable clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newCall(t *testing.T, lim Limits) (*Call, *recorder, *clock, *bytes.Buffer) {
	t.Helper()
	r, clk, logs := &recorder{}, &clock{t: time.Unix(1000, 0)}, &bytes.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return New(Config{Sink: r, Logger: logger, Module: "m.wasm", Tool: "t", Limits: lim, Now: clk.now}), r, clk, logs
}

// put writes s into mem at off and returns its pointer and length.
func put(mem memory, off uint32, s string) (uint32, uint32) {
	copy(mem[off:], s)
	return off, uint32(len(s))
}

func TestProgressRateLimitKeepsTheLast(t *testing.T) {
	c, r, clk, _ := newCall(t, Limits{})
	mem := make(memory, 64)
	for i := 1; i <= 1000; i++ {
		if st := c.Progress(mem, float64(i), 1000, 0, 0); st != abi.NoteAccepted {
			t.Fatalf("progress %d: status %d", i, st)
		}
	}
	if len(r.progress) != 1 || r.progress[0].done != 1 {
		t.Fatalf("at one instant: sent %v, want only the first", r.progress)
	}
	c.Flush()
	if len(r.progress) != 2 || r.progress[1] != (progressNote{1000, 1000, ""}) {
		t.Fatalf("after Flush: %v, want the last one too", r.progress)
	}
	c.Flush() // nothing held: nothing more
	// One interval later the next one goes at once; one just before it is held.
	clk.t = clk.t.Add(DefaultProgressInterval)
	c.Progress(mem, 1001, 0, 0, 0)
	clk.t = clk.t.Add(DefaultProgressInterval - time.Nanosecond)
	c.Progress(mem, 1002, 0, 0, 0)
	if len(r.progress) != 3 || r.progress[2].done != 1001 {
		t.Fatalf("sent %v, want 1001 sent and 1002 held", r.progress)
	}
	clk.t = clk.t.Add(time.Nanosecond)
	c.Progress(mem, 1003, 0, 0, 0) // supersedes the held 1002
	c.Flush()
	if len(r.progress) != 4 || r.progress[3].done != 1003 {
		t.Fatalf("sent %v, want 1003 last and 1002 never", r.progress)
	}
	if k := c.Counts(); k.ProgressSent != 4 || k.ProgressCoalesced != 999 {
		t.Errorf("counts %+v, want 4 sent and 999 coalesced", k)
	}
}

func TestProgressArguments(t *testing.T) {
	c, r, _, logs := newCall(t, Limits{})
	mem := make(memory, 64)
	for _, done := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if st := c.Progress(mem, done, 10, 0, 0); st != abi.NoteInvalid {
			t.Errorf("done %v: status %d, want invalid", done, st)
		}
	}
	p, n := put(mem, 0, "half")
	if st := c.Progress(mem, 5, math.NaN(), p, n); st != abi.NoteAccepted {
		t.Fatalf("a NaN total: status %d, want accepted with no total", st)
	}
	if st := c.Progress(mem, 5, 10, 0, 0); st != abi.NoteDropped {
		t.Errorf("a progress that does not increase: status %d, want dropped", st)
	}
	if st := c.Progress(mem, 6, 10, 60, 5); st != abi.NoteInvalid {
		t.Errorf("a message running past memory: status %d, want invalid", st)
	}
	if st := c.Progress(mem, 6, 10, math.MaxUint32, math.MaxUint32); st != abi.NoteInvalid {
		t.Errorf("a range that overflows 32 bits: status %d, want invalid", st)
	}
	if len(r.progress) != 1 || r.progress[0] != (progressNote{5, 0, "half"}) {
		t.Errorf("sent %v, want only {5 0 half}", r.progress)
	}
	k := c.Report()
	if k.Invalid != 5 || k.ProgressDropped != 1 {
		t.Errorf("counts %+v, want 5 invalid and 1 dropped", k)
	}
	if !strings.Contains(logs.String(), `"msg":"guest notes limited"`) || !strings.Contains(logs.String(), `"invalid":5`) {
		t.Errorf("no summary in the server log:\n%s", logs)
	}
}

func TestLogLimits(t *testing.T) {
	c, r, _, logs := newCall(t, Limits{LogCount: 3, LogBytes: 16, LogTotalBytes: 40})
	mem := make(memory, 1<<16)
	p, n := put(mem, 0, "hello")
	if st := c.Log(mem, int32(abi.LogWarning), p, n); st != abi.NoteAccepted {
		t.Fatalf("status %d", st)
	}
	if st := c.Log(mem, 99, p, n); st != abi.NoteAccepted {
		t.Fatalf("an unknown level: status %d, want accepted as error", st)
	}
	// A huge length within memory is read only as far as the limit.
	if st := c.Log(mem, int32(abi.LogInfo), 100, 60000); st != abi.NoteAccepted {
		t.Fatalf("a long message: status %d, want accepted, truncated", st)
	}
	if st := c.Log(mem, int32(abi.LogInfo), p, n); st != abi.NoteDropped {
		t.Errorf("a fourth message over LogCount 3: status %d, want dropped", st)
	}
	// The zeros of memory are NULs, written as escapes (\x00: 4 bytes).
	want := []string{"warning: hello", "error: hello", "info: " + strings.Repeat(`\x00`, 3) + `\…`}
	if strings.Join(r.logs, "|") != strings.Join(want, "|") {
		t.Errorf("logs %q, want %q", r.logs, want)
	}
	if !strings.Contains(logs.String(), `"msg":"guest log","module":"m.wasm","tool":"t","guest_level":"warning","message":"hello"`) {
		t.Errorf("the server log lacks the message:\n%s", logs)
	}
	if k := c.Report(); k.LogsSent != 3 || k.LogsDropped != 1 || k.Truncated != 1 || k.Invalid != 1 {
		t.Errorf("counts %+v", k)
	}
}

func TestLogTotalBytes(t *testing.T) {
	c, r, _, _ := newCall(t, Limits{LogTotalBytes: 10})
	mem := make(memory, 64)
	p, n := put(mem, 0, "123456")
	c.Log(mem, 0, p, n)
	if st := c.Log(mem, 0, p, n); st != abi.NoteDropped {
		t.Errorf("12 bytes over a 10-byte budget: status %d, want dropped", st)
	}
	if st := c.Log(mem, 0, 0, 4); st != abi.NoteAccepted {
		t.Errorf("a message that still fits: status %d", st)
	}
	if len(r.logs) != 2 {
		t.Errorf("logs %q", r.logs)
	}
}

func TestNoSink(t *testing.T) {
	c := New(Config{Logger: slog.New(slog.DiscardHandler)})
	mem := make(memory, 8)
	if c.Progress(mem, 1, 2, 0, 0) != abi.NoteAccepted || c.Log(mem, 1, 0, 8) != abi.NoteAccepted {
		t.Error("without a sink notes are still accepted (they reach the server log)")
	}
	c.Flush()
}

func TestReadMessage(t *testing.T) {
	mem := make(memory, 128)
	put(mem, 0, "héllo wörld")
	put(mem, 32, "ok\xff\xfeok")
	put(mem, 64, "\x1b]52;c;eA==\a")
	put(mem, 80, "x\r\ntask t1 completed")
	put(mem, 104, "a\u202eb")
	for _, tc := range []struct {
		name      string
		ptr, n    uint32
		limit     int
		want      string
		fixed     int
		ok        bool
		wantValid bool
	}{
		{"empty, any pointer", 1 << 31, 0, 16, "", 0, true, true},
		{"whole", 0, 13, 64, "héllo wörld", 0, true, true},
		{"cut at a character", 0, 13, 6, "hé…", truncated, true, true},
		{"cut inside é is not invalid", 0, 13, 5, "h…", truncated, true, true},
		{"repaired", 32, 6, 64, "ok\uFFFDok", repaired, true, true},
		// Issue 27 item 3: terminal sequences and bidirectional overrides
		// leave as visible escapes, on one line.
		{"OSC 52 escaped", 64, 12, 64, `\x1b]52;c;eA==\a`, escaped, true, true},
		{"CR and LF escaped", 80, 20, 64, `x\r\ntask t1 completed`, escaped, true, true},
		{"RLO escaped", 104, 5, 64, `a\u202eb`, escaped, true, true},
		{"escapes cut to the limit", 80, 20, 12, `x\r\ntask…`, escaped | truncated, true, true},
		{"out of memory", 124, 5, 64, "", 0, false, true},
		{"overflowing range", math.MaxUint32, 2, 64, "", 0, false, true},
		{"huge length", 0, math.MaxUint32, 64, "", 0, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fixed, ok := readMessage(mem, tc.ptr, tc.n, tc.limit)
			if got != tc.want || fixed != tc.fixed || ok != tc.ok {
				t.Errorf("got %q %b %v, want %q %b %v", got, fixed, ok, tc.want, tc.fixed, tc.ok)
			}
			if !utf8.ValidString(got) || len(got) > max(tc.limit, 0) {
				t.Errorf("%q is not valid UTF-8 within %d bytes", got, tc.limit)
			}
		})
	}
}

// FuzzReadMessage: whatever the guest's bytes and arguments, the message
// is valid UTF-8 within the limit, and nothing panics.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte("héllo"), uint32(0), uint32(5), 4)
	f.Add([]byte{0xff, 0xfe, 0xfd, 0xfc}, uint32(1), uint32(3), 3)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff}, uint32(0), uint32(5), 4) // cut, then a longer U+FFFD
	f.Fuzz(func(t *testing.T, b []byte, ptr, n uint32, limit int) {
		if limit < 3 || limit > 1<<16 {
			return
		}
		s, _, ok := readMessage(memory(b), ptr, n, limit)
		if ok && (!utf8.ValidString(s) || len(s) > limit) {
			t.Fatalf("%q: not valid UTF-8 within %d bytes", s, limit)
		}
		for _, c := range s {
			if printable.Unsafe(c) {
				t.Fatalf("%q holds %U", s, c)
			}
		}
	})
}
