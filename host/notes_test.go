package host_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// noteSink keeps the notes a call's caller would get.
type noteSink struct {
	progress []struct {
		Done, Total float64
		Msg         string
	}
	logs []struct {
		Level abi.LogLevel
		Msg   string
	}
}

func (s *noteSink) Progress(done, total float64, msg string) {
	s.progress = append(s.progress, struct {
		Done, Total float64
		Msg         string
	}{done, total, msg})
}

func (s *noteSink) Log(level abi.LogLevel, msg string) {
	s.logs = append(s.logs, struct {
		Level abi.LogLevel
		Msg   string
	}{level, msg})
}

// TestNotesHostileGuest: notes.wat calls progress and log with every bad
// argument it can (see its comment) at load and in a call. Nothing traps,
// the call succeeds, each call gets the status the ABI documents, the
// caller gets only what the limits let through, and the server log says
// what was refused. The bubble's clock stands still while the guest runs,
// so the thousand progress notes fall in one rate-limit interval: exactly
// the first and the last are sent.
func TestNotesHostileGuest(t *testing.T) {
	logs := &syncBuffer{}
	rt := newRuntime(t, host.Config{Logger: jsonLogger(logs)})
	m, err := rt.LoadFile(context.Background(), watPath(t, "notes"))
	if err != nil {
		t.Fatalf("notes at load must not fail the load: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		sink := &noteSink{}
		ctx := guestnote.WithSink(context.Background(), sink)
		res, err := m.Call(ctx, "notes.hostile", nil, host.Limits{})
		if err != nil {
			t.Fatalf("the call failed: %v", err)
		}
		var statuses string
		if err := json.Unmarshal(res, &statuses); err != nil || statuses != "201220002010" {
			t.Errorf("statuses %s, want 201220002010 (see notes.wat)", res)
		}
		type p = struct {
			Done, Total float64
			Msg         string
		}
		if len(sink.progress) != 2 || sink.progress[0] != (p{0, 0, ""}) || sink.progress[1] != (p{1002, 1002, "step"}) {
			t.Errorf("progress sent %+v, want {0 0 \"\"} (from _initialize) and {1002 1002 step}", sink.progress)
		}
		if len(sink.logs) != guestnote.DefaultLogCount {
			t.Fatalf("%d log messages sent, want the limit, %d", len(sink.logs), guestnote.DefaultLogCount)
		}
		for i, l := range sink.logs {
			if !l.Level.Valid() || !utf8.ValidString(l.Msg) || len(l.Msg) > guestnote.DefaultLogBytes {
				t.Errorf("log %d: level %d, %d bytes, valid UTF-8 %v", i, l.Level, len(l.Msg), utf8.ValidString(l.Msg))
			}
		}
		if l := sink.logs[0]; l.Level != abi.LogNotice || l.Msg != "step" {
			t.Errorf("the first log, from _initialize: %+v, want notice \"step\"", l)
		}
		if l := sink.logs[1]; l.Level != abi.LogError || l.Msg != "bad level" {
			t.Errorf("an out-of-range level: %+v, want error \"bad level\"", l)
		}
		if l := sink.logs[3]; !strings.HasSuffix(l.Msg, "…") || len(l.Msg) > guestnote.DefaultLogBytes {
			t.Errorf("the whole memory as a message: %d bytes, want it cut to %d ending in …", len(l.Msg), guestnote.DefaultLogBytes)
		}
		if l := sink.logs[4]; l.Msg != "ok\uFFFD" {
			t.Errorf("invalid UTF-8: %q, want it repaired", l.Msg)
		}
	})
	out := logs.String()
	for _, want := range []string{`"msg":"guest notes limited"`, `"logs_dropped":105`, `"invalid":6`, `"truncated":1`, `"repaired":2`,
		`"msg":"guest log"`, `"tool":"notes.hostile","guest_level":"error","message":"bad level"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the server log lacks %s:\n%.2000s", want, out)
		}
	}
}

// A call without a Sink (a plan run without a server, a test) still
// accepts notes: they reach the server log.
func TestNotesWithoutSink(t *testing.T) {
	logs := &syncBuffer{}
	rt := newRuntime(t, host.Config{Logger: jsonLogger(logs)})
	m, err := rt.LoadFile(context.Background(), watPath(t, "notes"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(context.Background(), "notes.hostile", nil, host.Limits{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), `"msg":"guest log"`); n != guestnote.DefaultLogCount {
		t.Errorf("%d guest log records, want %d", n, guestnote.DefaultLogCount)
	}
}

// Progress and logs need no grant and reach no one beyond the caller: a
// module that imports only them is not open world, even with a grant.
func TestNotesAreNotOpenWorld(t *testing.T) {
	path := watPath(t, "notes")
	grant := toolhostv1.Grant{Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"}}
	rt := newRuntime(t, host.Config{Egress: toolhostv1.Egress{Grants: map[string]toolhostv1.Grant{filepath.Base(path): grant}}})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if m.OpenWorld() {
		t.Error("notes.wat imports only progress and log, yet OpenWorld() = true")
	}
}

// jsonLogger logs JSON lines, debug and up, into b.
func jsonLogger(b *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// A Go SDK guest (mathtools' math.primes, which reports after each of its
// 20 segments) reaches the caller's Sink through guest.Progress and
// guest.Log. In the bubble the clock stands still, so the rate limit lets
// through the first progress and the last.
func TestNotesFromGoGuest(t *testing.T) {
	rt := newRuntime(t, host.Config{})
	m, err := rt.LoadFile(context.Background(), testwasm.Go(t, "./tools-src/mathtools"))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		sink := &noteSink{}
		res, err := m.Call(guestnote.WithSink(context.Background(), sink), "math.primes", []byte(`{"below":1000000}`), host.Limits{})
		if err != nil || string(res) != `{"count":78498,"largest":999983}` {
			t.Fatalf("result %s, err %v", res, err)
		}
		if len(sink.progress) != 2 {
			t.Fatalf("progress %+v, want the first segment's and the last", sink.progress)
		}
		first, last := sink.progress[0], sink.progress[1]
		if first.Done != 50002 || first.Total != 1e6 || last.Done != 1e6 || last.Total != 1e6 || last.Msg != "78498 primes below 1000000" {
			t.Errorf("progress %+v", sink.progress)
		}
		if len(sink.logs) != 1 || sink.logs[0].Level != abi.LogInfo || !strings.HasPrefix(sink.logs[0].Msg, "sieved 999998 numbers") {
			t.Errorf("logs %+v", sink.logs)
		}
	})
}

// The C SDK's th_progress and th_log (abi/c/toolhost.h), built from
// source with clang: the statuses come back to the guest, printf-style
// messages arrive, a progress that does not increase is dropped, and a
// message over the header's 4 KiB buffer is cut there.
func TestNotesFromCGuest(t *testing.T) {
	rt := newRuntime(t, host.Config{})
	m, err := rt.LoadFile(context.Background(), testwasm.C(t, "host/testdata/cnotes"))
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		sink := &noteSink{}
		res, err := m.Call(guestnote.WithSink(context.Background(), sink), "c.notes", nil, host.Limits{})
		if err != nil || string(res) != `[0,1,0,0,0,0,0,0,0]` {
			t.Fatalf("statuses %s, err %v; want [0,1,0,0,0,0,0,0,0]", res, err)
		}
		if len(sink.progress) != 2 || sink.progress[0].Msg != "step 1 of 3" || sink.progress[1].Done != 3 || sink.progress[1].Msg != "" {
			t.Errorf("progress %+v", sink.progress)
		}
		var got []string
		for _, l := range sink.logs {
			got = append(got, l.Level.String()+" "+l.Msg[:min(len(l.Msg), 13)])
		}
		want := "debug debug message|info info|notice notice|warning warning|error error|info xxxxxxxxxxxxx"
		if strings.Join(got, "|") != want {
			t.Errorf("logs %q, want %q", got, want)
		}
		if n := len(sink.logs[len(sink.logs)-1].Msg); n != 4095 {
			t.Errorf("the long message arrived with %d bytes, want 4095 (the header's buffer)", n)
		}
	})
}
