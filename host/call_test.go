package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
)

// outcome is what a call must give: a result, a guest error, a Fault, or
// the context's end.
type outcome struct {
	result   string        // the exact result JSON, when the call succeeds
	guest    *abi.Error    // a guest-reported error: kind and RetryAfterMS must match
	message  string        // a substring of the guest error's message
	fault    string        // a substring of the Fault's Reason
	ctxErr   error         // the call must end with an error wrapping this
	deadline time.Duration // the context's deadline, for ctxErr cases
}

func check(t *testing.T, res json.RawMessage, err error, want outcome) {
	t.Helper()
	switch {
	case want.guest != nil:
		var ge *abi.Error
		if !errors.As(err, &ge) {
			t.Fatalf("got %s, %v (%T); want a guest error %v", res, err, err, want.guest)
		}
		if ge.Kind != want.guest.Kind || ge.RetryAfterMS != want.guest.RetryAfterMS || !strings.Contains(ge.Message, want.message) {
			t.Fatalf("guest error = %+v; want kind %s, retry_after_ms %d, message containing %q",
				ge, want.guest.Kind, want.guest.RetryAfterMS, want.message)
		}
	case want.fault != "":
		var f *host.Fault
		if !errors.As(err, &f) {
			t.Fatalf("got %s, %v (%T); want a *host.Fault", res, err, err)
		}
		if !strings.Contains(f.Reason, want.fault) {
			t.Fatalf("Fault.Reason = %q; want it to contain %q", f.Reason, want.fault)
		}
		var ge *abi.Error
		if errors.As(err, &ge) {
			t.Fatalf("Fault %v also matches *abi.Error", err)
		}
	case want.ctxErr != nil:
		if !errors.Is(err, want.ctxErr) {
			t.Fatalf("got %s, %v (%T); want an error wrapping %v", res, err, err, want.ctxErr)
		}
		var f *host.Fault
		if errors.As(err, &f) {
			t.Fatalf("context end reported as a Fault: %v", err)
		}
	default:
		if err != nil {
			t.Fatalf("call failed: %v", err)
		}
		if string(res) != want.result {
			t.Fatalf("result = %s; want %s", res, want.result)
		}
	}
}

// stillServes checks that a good call succeeds after a bad one.
func stillServes(t *testing.T, mb *host.Module) {
	t.Helper()
	res, err := mb.Call(context.Background(), "state", []byte(`{}`), host.Limits{})
	if err != nil || string(res) != "1" {
		t.Fatalf("good call after a bad one = %s, %v; want 1", res, err)
	}
}

func TestCallWAT(t *testing.T) {
	rt, _, echo := sharedRuntime(t)
	cases := []struct {
		module, args string
		want         outcome
	}{
		{"echo", `{"text":"hi","n":[1,2,{"x":null}]}`, outcome{result: `{"text":"hi","n":[1,2,{"x":null}]}`}},
		{"echo", ``, outcome{result: `null`}},
		{"echo", `"` + strings.Repeat("é", 50000) + `"`, outcome{result: `"` + strings.Repeat("é", 50000) + `"`}}, // grows memory
		{"dupname", `{}`, outcome{result: `"the other echo"`}},
		{"guesterror", `{}`, outcome{guest: &abi.Error{Kind: abi.KindTransient, RetryAfterMS: 1500}, message: "upstream 429"}},
		{"oob", `{}`, outcome{fault: "toolhost_call returned ptr=65536 len=16, outside its 65536-byte memory"}},
		{"allocoob", `{}`, outcome{fault: "passing the tool name: toolhost_alloc(12) returned 2147483632, outside its 65536-byte memory"}},
		{"garbage", `{}`, outcome{fault: "response: not a JSON object"}},
		{"invalidutf8", `{}`, outcome{fault: "response: not valid UTF-8"}},
		{"both", `{}`, outcome{fault: `response: has both "result" and "error"`}},
		{"neither", `{}`, outcome{fault: `response: has neither "result" nor "error"`}},
		{"badkind", `{}`, outcome{fault: `error kind "fatal" is not transient, schema or internal`}},
	}
	for _, tc := range cases {
		t.Run(tc.module, func(t *testing.T) {
			m, err := rt.LoadFile(context.Background(), watPath(t, tc.module))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			var args []byte
			if tc.args != "" {
				args = []byte(tc.args)
			}
			res, err := m.Call(context.Background(), m.Tools[0].Name, args, host.Limits{})
			check(t, res, err, tc.want)
			if res, err := echo.Call(context.Background(), "wat.echo", []byte(`1`), host.Limits{}); err != nil || string(res) != "1" {
				t.Fatalf("echo after %s = %s, %v", tc.module, res, err)
			}
		})
	}
}

// TestCallMisbehave runs each misbehaving tool and checks the error type,
// then that the runtime still serves.
func TestCallMisbehave(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	callMisbehave(t, mb)
}

// callMisbehave is TestCallMisbehave's cases on mb, the misbehave module
// however its runtime was configured.
func callMisbehave(t *testing.T, mb *host.Module) {
	cases := []struct {
		name, tool, args string
		lim              host.Limits
		want             outcome
	}{
		{"echo", "echo", `{"text":"hi"}`, host.Limits{}, outcome{result: `{"text":"hi"}`}},
		{"sleep/short", "sleep", `{"ms":1}`, host.Limits{}, outcome{result: `"slept"`}},
		{"sleep/deadline", "sleep", `{"ms":10000}`, host.Limits{}, outcome{ctxErr: context.DeadlineExceeded, deadline: 100 * time.Millisecond}},
		{"spin/deadline", "spin", `{}`, host.Limits{}, outcome{ctxErr: context.DeadlineExceeded, deadline: 100 * time.Millisecond}},
		{"panic", "panic", `{}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindInternal}, message: "tool panic panicked: assignment to entry in nil map"}},
		{"fail", "fail", `{}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindInternal}, message: "it went wrong"}},
		{"flaky/ok", "flaky", `{}`, host.Limits{}, outcome{result: `"ok"`}},
		{"flaky/transient", "flaky", `{"fail":true}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindTransient}, message: "429"}},
		{"flaky/retry-after", "flaky", `{"fail":true,"retry_after_ms":1500}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindTransient, RetryAfterMS: 1500}, message: "429"}},
		{"schema/bad-args", "sleep", `{"ms":"soon"}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindSchema}, message: "arguments"}},
		{"schema/not-json", "sleep", `{`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindSchema}, message: "arguments"}},
		{"schema/unknown-tool", "nope", `{}`, host.Limits{}, outcome{guest: &abi.Error{Kind: abi.KindSchema}, message: `no tool "nope"`}},
		// A Go runtime fatal error (an unrecovered panic, a stack overflow, out
		// of memory) ends in runtime.abort, which is the wasm unreachable trap.
		{"gopanic", "gopanic", `{}`, host.Limits{}, outcome{fault: "toolhost_call: wasm error: unreachable"}},
		{"exit/3", "exit", `{"code":3}`, host.Limits{}, outcome{fault: "toolhost_call: guest exited with code 3"}},
		{"exit/0", "exit", `{"code":0}`, host.Limits{}, outcome{fault: "toolhost_call: guest exited with code 0"}},
		{"trap", "trap", `{}`, host.Limits{}, outcome{fault: "out of bounds memory access"}},
		{"recurse", "recurse", `{}`, host.Limits{}, outcome{fault: "toolhost_call: wasm error: unreachable"}},
		{"grow", "grow", `{}`, host.Limits{MemoryBytes: 32 << 20}, outcome{fault: "toolhost_call: wasm error: unreachable"}},
		// The cap is on the whole response: {"result":"xxx…"} is n+13 bytes.
		{"huge/fits", "huge", `{"n":987}`, host.Limits{OutputBytes: 1000}, outcome{result: `"` + strings.Repeat("x", 987) + `"`}},
		{"huge/over", "huge", `{"n":988}`, host.Limits{OutputBytes: 1000}, outcome{fault: "toolhost_call returned 1001 bytes, over the 1000-byte output cap"}},
		{"huge/default-cap", "huge", `{"n":1048576}`, host.Limits{}, outcome{fault: "over the 1048576-byte output cap"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tc.want.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.want.deadline)
				defer cancel()
			}
			start := time.Now()
			res, err := mb.Call(ctx, tc.tool, []byte(tc.args), tc.lim)
			took := time.Since(start)
			check(t, res, err, tc.want)
			// Generous: this checks the call ends at its deadline (an
			// interruptible sleep, a stopped loop), not a speed target.
			if tc.want.deadline > 0 && took > tc.want.deadline+900*time.Millisecond {
				t.Errorf("call with a %v deadline returned after %v", tc.want.deadline, took)
			}
			stillServes(t, mb)
		})
	}
}

// TestCallContextEnded: a cancelled context and a deadline with a custom
// cause are both reported as the context's end, never as a Fault.
func TestCallContextEnded(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	t.Run("already-cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := mb.Call(ctx, "state", []byte(`{}`), host.Limits{})
		check(t, res, err, outcome{ctxErr: context.Canceled})
	})
	t.Run("cancelled-while-sleeping", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		res, err := mb.Call(ctx, "sleep", []byte(`{"ms":10000}`), host.Limits{})
		check(t, res, err, outcome{ctxErr: context.Canceled})
	})
	t.Run("deadline-with-cause", func(t *testing.T) {
		errSlow := errors.New("attempt timed out")
		ctx, cancel := context.WithTimeoutCause(context.Background(), 50*time.Millisecond, errSlow)
		defer cancel()
		res, err := mb.Call(ctx, "spin", []byte(`{}`), host.Limits{})
		check(t, res, err, outcome{ctxErr: context.DeadlineExceeded})
		if !errors.Is(err, errSlow) {
			t.Errorf("error %v does not carry the context's cause", err)
		}
	})
	stillServes(t, mb)
}

// TestSleepIsReal: wazero's default nanosleep returns at once; the host's
// must actually wait.
func TestSleepIsReal(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	start := time.Now()
	res, err := mb.Call(context.Background(), "sleep", []byte(`{"ms":30}`), host.Limits{})
	if err != nil || string(res) != `"slept"` {
		t.Fatalf("sleep = %s, %v", res, err)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("a 30 ms guest sleep returned after %v", took)
	}
}

func TestFreshInstances(t *testing.T) {
	_, mb, _ := sharedRuntime(t)
	ctx := context.Background()
	t.Run("state", func(t *testing.T) {
		for i := range 2 {
			res, err := mb.Call(ctx, "state", []byte(`{}`), host.Limits{})
			if err != nil || string(res) != "1" {
				t.Fatalf("call %d: state = %s, %v; want 1 (a fresh instance)", i, res, err)
			}
		}
	})
	t.Run("nonce", func(t *testing.T) {
		seen := map[string]bool{}
		for range 2 {
			res, err := mb.Call(ctx, "nonce", []byte(`{}`), host.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var n string
			if err := json.Unmarshal(res, &n); err != nil || len(n) != 32 {
				t.Fatalf("nonce = %s, %v; want 32 hex digits", res, err)
			}
			if seen[n] {
				t.Fatalf("nonce %s repeated: randomness is not real or instances are reused", n)
			}
			seen[n] = true
		}
	})
	t.Run("now", func(t *testing.T) {
		res, err := mb.Call(ctx, "now", []byte(`{}`), host.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		ms, err := strconv.ParseInt(string(res), 10, 64)
		if err != nil {
			t.Fatalf("now = %s: %v", res, err)
		}
		if d := time.Since(time.UnixMilli(ms)); d < -time.Minute || d > time.Minute {
			t.Errorf("guest clock says %v, %v away from the host's", time.UnixMilli(ms), d)
		}
	})
}

// TestChattyOutputCapped: guest stdout and stderr share one LogBytes cap
// per call, logged as one line with the rest counted.
func TestChattyOutputCapped(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, host.Config{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Limits: host.Limits{LogBytes: 1000},
	})
	mb, err := rt.LoadFile(context.Background(), misbehavePath)
	if err != nil {
		t.Fatal(err)
	}
	type record struct {
		Msg     string `json:"msg"`
		Tool    string `json:"tool"`
		Output  string `json:"output"`
		Dropped int    `json:"dropped_bytes"`
	}
	cases := []struct {
		args        string
		lim         host.Limits
		wantOutput  string
		wantDropped int
	}{
		{`{"stdout":3,"stderr":2}`, host.Limits{}, "oooee", 0},
		{`{"stdout":3000,"stderr":3000}`, host.Limits{}, strings.Repeat("o", 1000), 5000},
		{`{"stdout":600,"stderr":600}`, host.Limits{}, strings.Repeat("o", 600) + strings.Repeat("e", 400), 200},
		{`{"stdout":50,"stderr":50}`, host.Limits{LogBytes: 10}, strings.Repeat("o", 10), 90},
		{`{}`, host.Limits{}, "", -1}, // no output: no log line
	}
	for _, tc := range cases {
		before := len(logs.String())
		res, err := mb.Call(context.Background(), "chatty", []byte(tc.args), tc.lim)
		if err != nil || string(res) != `"said it"` {
			t.Fatalf("%s: chatty = %s, %v", tc.args, res, err)
		}
		var lines []record
		for _, l := range strings.Split(strings.TrimSpace(logs.String()[before:]), "\n") {
			if l == "" {
				continue
			}
			var r record
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			lines = append(lines, r)
		}
		if tc.wantDropped < 0 {
			if len(lines) != 0 {
				t.Errorf("%s: logged %+v for a silent call", tc.args, lines)
			}
			continue
		}
		if len(lines) != 1 {
			t.Fatalf("%s: %d log lines, want 1", tc.args, len(lines))
		}
		r := lines[0]
		if r.Tool != "chatty" || r.Output != tc.wantOutput || r.Dropped != tc.wantDropped {
			t.Errorf("%s: logged tool %q, %d bytes of output (%.12q…), %d dropped; want %d bytes, %d dropped",
				tc.args, r.Tool, len(r.Output), r.Output, r.Dropped, len(tc.wantOutput), tc.wantDropped)
		}
	}
}

// TestConcurrentCalls: 32 calls at once, a quarter of them crashing their
// instance, all get their own answer. Run under -race.
func TestConcurrentCalls(t *testing.T) {
	_, mb, echo := sharedRuntime(t)
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			ctx := context.Background()
			switch i % 4 {
			case 0:
				_, err := mb.Call(ctx, "exit", []byte(`{"code":3}`), host.Limits{})
				var f *host.Fault
				if !errors.As(err, &f) {
					errs[i] = fmt.Errorf("exit: got %v, want a Fault", err)
				}
			case 1:
				args := fmt.Sprintf(`{"call":%d}`, i)
				res, err := echo.Call(ctx, "wat.echo", []byte(args), host.Limits{})
				if err != nil || string(res) != args {
					errs[i] = fmt.Errorf("wat.echo: %s, %v", res, err)
				}
			default:
				res, err := mb.Call(ctx, "state", []byte(`{}`), host.Limits{})
				if err != nil || string(res) != "1" {
					errs[i] = fmt.Errorf("state: %s, %v", res, err)
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

// TestGuestDeathLogged: a Go guest's fatal error is a Fault (the wasm
// unreachable trap of runtime.abort) and the runtime's own account of it
// reaches the log. For grow this proves the memory limit is what stopped
// it: the Go runtime reports running out of memory at about 32 MiB.
func TestGuestDeathLogged(t *testing.T) {
	var logs syncBuffer
	rt := newRuntime(t, host.Config{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	mb, err := rt.LoadFile(context.Background(), misbehavePath)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ tool, logged string }{
		{"grow", "fatal error: out of memory"},
		{"recurse", "fatal error: stack overflow"},
		{"gopanic", "panic: assignment to entry in nil map"},
	}
	for _, tc := range cases {
		before := len(logs.String())
		_, err := mb.Call(context.Background(), tc.tool, []byte(`{}`), host.Limits{MemoryBytes: 32 << 20})
		var f *host.Fault
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "wasm error: unreachable") {
			t.Errorf("%s: err = %.200v; want a Fault for the unreachable trap", tc.tool, err)
		}
		var r struct {
			Tool   string `json:"tool"`
			Output string `json:"output"`
		}
		if err := json.Unmarshal([]byte(logs.String()[before:]), &r); err != nil {
			t.Fatalf("%s: log %q: %v", tc.tool, logs.String()[before:], err)
		}
		if r.Tool != tc.tool || !strings.Contains(r.Output, tc.logged) {
			t.Errorf("%s: logged output %.300q; want it to contain %q", tc.tool, r.Output, tc.logged)
		}
	}
}
