package plan

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
)

// encodedSize counts exactly what encodeJSON writes.
func TestEncodedSizeIsTheEncodingsLength(t *testing.T) {
	docs := []string{
		`null`, `true`, `false`, `0`, `-1.5e300`, `""`, `"plain"`, `[]`, `{}`,
		`"quote \" backslash \\ newline \n tab \t cr \r bell \u0007 nul \u0000 bs \b ff \f"`,
		`"<html> & 'x' é 日本 🎉 \u2028 \u2029"`,
		`{"a":[1,{"b":null,"c":"d"},[]],"é":{"k\"":true}}`,
		`[[[[[]]]],{"":""}]`,
	}
	var values []any
	for _, d := range docs {
		v, err := decodeJSON([]byte(d))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		values = append(values, v)
	}
	values = append(values, "invalid \xff utf-8 \xc3", map[string]any{"\x01": []any{"\xe2\x80"}})
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		values = append(values, randomValue(rng, 4))
	}
	for _, v := range values {
		want := len(encodeJSON(v))
		if got := encodedSize(v, 1<<30); got != want {
			t.Errorf("encodedSize(%s) = %d, want %d", encodeJSON(v), got, want)
		}
		if want > 0 {
			if got := encodedSize(v, want-1); got != want {
				t.Errorf("encodedSize(%s, limit %d) = %d, want limit+1 = %d", encodeJSON(v), want-1, got, want)
			}
		}
	}
}

func randomValue(rng *rand.Rand, depth int) any {
	switch k := rng.IntN(7); {
	case depth == 0 || k == 0:
		return json.Number(fmt.Sprint(rng.IntN(100000) - 500))
	case k == 1:
		return rng.IntN(2) == 0
	case k == 2:
		return nil
	case k == 3:
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return string(b)
	case k == 4:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomValue(rng, depth-1)
		}
		return a
	default:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[fmt.Sprint("k", rng.IntN(50), "\"\n")] = randomValue(rng, depth-1)
		}
		return m
	}
}

// refs is an arguments object naming step's result n times.
func refs(step, n int) string {
	r := fmt.Sprintf(`{"$ref":"/steps/%d/result"}`, step)
	return `{"v":[` + strings.Repeat(r+",", n-1) + r + `]}`
}

// Finding 10.1: references multiply. Each step names the previous result a
// thousand times and the tool echoes its arguments, so step 3's arguments
// would be about 100 MB and step 4's 100 GB, from a plan of a few
// kilobytes. The step over the argument limit is refused before its
// arguments are built, and the session stays within a few megabytes.
func TestBoundsReferencesThatMultiply(t *testing.T) {
	steps := []Step{
		st(1, "echo", `{"s":"`+strings.Repeat("x", 60)+`"}`),
		st(2, "echo", refs(1, 1000)),
		st(3, "echo", refs(2, 1000)),
		st(4, "echo", refs(3, 1000)),
	}
	const argsLimit = 1 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := runSession(t, &fakeDispatcher{}, Static(steps), "multiply", Limits{}, func(c *Config) {
		c.Bounds = Bounds{MaxArgsBytes: argsLimit, MaxResultBytes: argsLimit + 4096, MaxSessionBytes: 16 << 20}
	})
	runtime.ReadMemStats(&after)
	if n := len(res.History); n != 3 {
		t.Fatalf("history has %d steps, want 3 (the last one refused): %s", n, res.Message)
	}
	if res.History[1].Error != nil || len(res.History[1].Result) < 60_000 {
		t.Fatalf("step 2 (about 100 KB of arguments) should have run: %+v", res.History[1].Error)
	}
	refused := res.History[2]
	if refused.ID != 3 || refused.Error == nil || refused.Error.Kind != ErrorKind(dispatcher.KindSchema) ||
		!strings.Contains(refused.Error.Message, "after $ref substitution would be more than 1048576 bytes") {
		t.Fatalf("step 3: %+v; want it refused for the size of its arguments", refused.Error)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("the session allocated %d MiB; the refused arguments were built", alloc>>20)
	}
}

// A result over the result limit fails its step (internal) and is not
// kept.
func TestBoundsResult(t *testing.T) {
	steps := []Step{st(1, "echo", `{"s":"`+strings.Repeat("y", 500)+`"}`)}
	res := runSession(t, &fakeDispatcher{}, Static(steps), "big result", Limits{}, func(c *Config) {
		c.Bounds = Bounds{MaxResultBytes: 100}
	})
	h := res.History[0]
	if h.Error == nil || h.Error.Kind != ErrorKind(dispatcher.KindInternal) || h.Result != nil ||
		!strings.Contains(h.Error.Message, "over this server's limit of 100 bytes per result") {
		t.Fatalf("step 1: %+v, result %d bytes", h.Error, len(h.Result))
	}
}

// The session's retained bytes stay under its limit: the step whose
// arguments or result would pass it ends the session (fatal,
// budget_exceeded) without being kept.
func TestBoundsSession(t *testing.T) {
	var steps []Step
	for i := 1; i <= 6; i++ {
		steps = append(steps, st(i, "echo", fmt.Sprintf(`{"s":"%d%s"}`, i, strings.Repeat("z", 200))))
	}
	// Reused steps copy a result too: they count.
	steps = append(steps, st(7, "echo", fmt.Sprintf(`{"s":"%d%s"}`, 1, strings.Repeat("z", 200))))
	const limit = 3000
	res := runSession(t, &fakeDispatcher{}, Static(steps), "many", Limits{}, func(c *Config) {
		c.Bounds = Bounds{MaxSessionBytes: limit}
	})
	if res.Reason != ReasonFatal || res.Error == nil || res.Error.Kind != ErrorKind(dispatcher.KindBudgetExceeded) ||
		!strings.Contains(res.Error.Message, "limit of 3000 bytes per session") {
		t.Fatalf("%s (%s): %+v", res.Status, res.Reason, res.Error)
	}
	held := 0
	for _, e := range res.Events {
		held += heldBytes(e)
	}
	if held > limit {
		t.Errorf("the log holds %d bytes of arguments and results, over the %d limit", held, limit)
	}
	if len(res.History) < 2 {
		t.Errorf("only %d steps ran before the limit", len(res.History))
	}

	// A plan that alone passes the limit is not adopted.
	res = runSession(t, &fakeDispatcher{}, Static(steps), "many", Limits{}, func(c *Config) {
		c.Bounds = Bounds{MaxSessionBytes: 1000}
	})
	if res.Reason != ReasonFatal || len(res.Revisions) != 0 || !strings.Contains(res.Message, "the plan of") {
		t.Fatalf("%s (%s): %s, %d revisions", res.Status, res.Reason, res.Message, len(res.Revisions))
	}
}
