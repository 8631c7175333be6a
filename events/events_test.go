package events_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/events"
)

// drain returns the events buffered on s without blocking.
func drain(s *events.Subscription) []events.Event {
	var out []events.Event
	for {
		select {
		case e, ok := <-s.C:
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

func types(es []events.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

func TestSeqStrictlyIncreasing(t *testing.T) {
	bus := events.NewBus(nil)
	sub := bus.Subscribe(1000)
	defer sub.Close()
	before := time.Now()
	for i := range 300 {
		bus.Publish("t.x", i)
	}
	got := drain(sub)
	if len(got) != 300 {
		t.Fatalf("%d events, want 300", len(got))
	}
	for i, e := range got {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, e.Seq, i+1)
		}
		if e.Type != "t.x" || e.Data != i {
			t.Fatalf("event %d = %+v", i, e)
		}
		if e.Time.Before(before) || (i > 0 && e.Time.Before(got[i-1].Time)) {
			t.Fatalf("event %d time %v goes backwards", i, e.Time)
		}
	}
}

func TestPrefixFilters(t *testing.T) {
	published := []string{"dispatch.attempt", "dispatch.retry", "dispatcher.x", "breaker.state", "plan.diff", "plan", "p", ""}
	tests := []struct {
		name     string
		prefixes []string
		want     []string
	}{
		{"none: everything", nil, published},
		{"empty prefix: everything", []string{""}, published},
		{"dispatch.", []string{"dispatch."}, []string{"dispatch.attempt", "dispatch.retry"}},
		{"dispatch", []string{"dispatch"}, []string{"dispatch.attempt", "dispatch.retry", "dispatcher.x"}},
		{"exact type", []string{"dispatch.retry"}, []string{"dispatch.retry"}},
		{"two prefixes", []string{"breaker.", "plan"}, []string{"breaker.state", "plan.diff", "plan"}},
		{"overlapping prefixes deliver once", []string{"plan", "plan.diff", "p"}, []string{"plan.diff", "plan", "p"}},
		{"longer than any type", []string{"dispatch.attempt.more"}, nil},
		{"case sensitive", []string{"Dispatch."}, nil},
		{"no match", []string{"governor."}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bus := events.NewBus(nil)
			sub := bus.Subscribe(100, tt.prefixes...)
			defer sub.Close()
			for _, typ := range published {
				bus.Publish(typ, nil)
			}
			got := drain(sub)
			if !slices.Equal(types(got), tt.want) {
				t.Errorf("got %q, want %q", types(got), tt.want)
			}
			if sub.Dropped() != 0 {
				t.Errorf("Dropped = %d", sub.Dropped())
			}
		})
	}
}

// Filtered-out events still take a sequence number: a subscriber sees gaps,
// never reuse.
func TestFilteredSeqHasGaps(t *testing.T) {
	bus := events.NewBus(nil)
	sub := bus.Subscribe(10, "b")
	defer sub.Close()
	for _, typ := range []string{"a", "b", "a", "b"} {
		bus.Publish(typ, nil)
	}
	got := drain(sub)
	if len(got) != 2 || got[0].Seq != 2 || got[1].Seq != 4 {
		t.Errorf("got %+v, want seqs 2 and 4", got)
	}
}

func TestFullBufferDropsWithoutBlocking(t *testing.T) {
	bus := events.NewBus(nil)
	small := bus.Subscribe(2)
	defer small.Close()
	big := bus.Subscribe(100)
	defer big.Close()
	for i := range 5 {
		bus.Publish("x", i) // must not block on the full subscriber
	}
	if d := small.Dropped(); d != 3 {
		t.Errorf("small.Dropped() = %d, want 3", d)
	}
	if d := big.Dropped(); d != 0 {
		t.Errorf("big.Dropped() = %d, want 0", d)
	}
	got := drain(small)
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 {
		t.Errorf("small kept %+v, want the first two", got)
	}
	if n := len(drain(big)); n != 5 {
		t.Errorf("big got %d events, want 5", n)
	}
	// With room again, delivery resumes; the count stays.
	bus.Publish("x", 5)
	got = drain(small)
	if len(got) != 1 || got[0].Seq != 6 {
		t.Errorf("after draining, small got %+v, want seq 6", got)
	}
	if d := small.Dropped(); d != 3 {
		t.Errorf("small.Dropped() = %d after resuming, want 3", d)
	}
}

func TestSubscribeDefaultBuffer(t *testing.T) {
	for _, buf := range []int{0, -1} {
		bus := events.NewBus(nil)
		sub := bus.Subscribe(buf)
		for i := range 300 {
			bus.Publish("x", i)
		}
		if n, d := len(drain(sub)), sub.Dropped(); n != 256 || d != 44 {
			t.Errorf("Subscribe(%d): kept %d, dropped %d; want 256 and 44", buf, n, d)
		}
		sub.Close()
	}
}

func TestCloseIdempotentAndClosesC(t *testing.T) {
	bus := events.NewBus(nil)
	sub := bus.Subscribe(10)
	other := bus.Subscribe(10)
	defer other.Close()
	bus.Publish("before", nil)
	sub.Close()
	sub.Close() // must not panic
	e, ok := <-sub.C
	if !ok || e.Type != "before" {
		t.Fatalf("buffered event lost on Close: %+v %v", e, ok)
	}
	if _, ok := <-sub.C; ok {
		t.Fatal("C is not closed after Close")
	}
	bus.Publish("after", nil) // no send on the closed channel
	if got := drain(other); !slices.Equal(types(got), []string{"before", "after"}) {
		t.Errorf("other subscriber got %q", types(got))
	}
}

func TestCloseSubscribers(t *testing.T) {
	bus := events.NewBus(nil)
	subs := []*events.Subscription{bus.Subscribe(1), bus.Subscribe(10, "a"), bus.Subscribe(0)}
	subs[0].Close() // already closed: CloseSubscribers must cope
	bus.CloseSubscribers()
	for _, s := range subs {
		for range s.C { // ends only once C is closed
		}
		s.Close() // still harmless
	}
	if bus.Enabled() {
		t.Error("Enabled() after CloseSubscribers with no logger")
	}
	bus.CloseSubscribers() // again, with none left
	// The bus stays usable.
	s := bus.Subscribe(1)
	defer s.Close()
	bus.Publish("x", nil)
	if got := drain(s); len(got) != 1 {
		t.Errorf("new subscriber after CloseSubscribers got %d events", len(got))
	}
}

func TestEnabled(t *testing.T) {
	var nilBus *events.Bus
	if nilBus.Enabled() {
		t.Error("nil bus is enabled")
	}
	nilBus.Publish("x", nil) // a nil bus is a valid "no events"

	bus := events.NewBus(nil)
	if bus.Enabled() {
		t.Error("no logger, no subscriber: enabled")
	}
	sub := bus.Subscribe(1)
	if !bus.Enabled() {
		t.Error("with a subscriber: not enabled")
	}
	sub.Close()
	if bus.Enabled() {
		t.Error("after the last subscriber closed: enabled")
	}

	var buf bytes.Buffer
	if !events.NewBus(slog.New(slog.NewJSONHandler(&buf, nil))).Enabled() {
		t.Error("with an Info logger: not enabled")
	}
	quiet := events.NewBus(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if quiet.Enabled() {
		t.Error("with a Warn logger: enabled")
	}
	quiet.Publish("x", nil)
	if buf.Len() != 0 {
		t.Errorf("a Warn logger got %q", buf.String())
	}
}

// A bus no one listens to does not consume sequence numbers.
func TestDisabledPublishIsFree(t *testing.T) {
	bus := events.NewBus(nil)
	bus.Publish("lost", nil)
	bus.Publish("lost", nil)
	sub := bus.Subscribe(1)
	defer sub.Close()
	bus.Publish("seen", nil)
	if got := drain(sub); len(got) != 1 || got[0].Seq != 1 {
		t.Errorf("got %+v, want seq 1", got)
	}
}

func TestPublishLogsJSONLine(t *testing.T) {
	var buf bytes.Buffer
	bus := events.NewBus(slog.New(slog.NewJSONHandler(&buf, nil)))
	type attempt struct {
		Tool    string `json:"tool"`
		Attempt int    `json:"attempt"`
	}
	bus.Publish("dispatch.attempt", attempt{Tool: "text.count", Attempt: 1})
	bus.Publish("dispatch.retry", map[string]any{"delay_ms": 120})
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines: %q", len(lines), buf.String())
	}
	var rec struct {
		Level string          `json:"level"`
		Msg   string          `json:"msg"`
		Seq   uint64          `json:"seq"`
		Data  json.RawMessage `json:"data"`
		Time  time.Time       `json:"time"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatalf("line %q: %v", lines[0], err)
	}
	if rec.Level != "INFO" || rec.Msg != "dispatch.attempt" || rec.Seq != 1 || string(rec.Data) != `{"tool":"text.count","attempt":1}` || rec.Time.IsZero() {
		t.Errorf("first line %+v (data %s)", rec, rec.Data)
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatalf("line %q: %v", lines[1], err)
	}
	if rec.Msg != "dispatch.retry" || rec.Seq != 2 || string(rec.Data) != `{"delay_ms":120}` {
		t.Errorf("second line %+v (data %s)", rec, rec.Data)
	}
}

func TestEventJSON(t *testing.T) {
	e := events.Event{Seq: 7, Time: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), Type: "plan.diff", Data: map[string]int{"added": 1}}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":7,"time":"2025-01-02T03:04:05Z","type":"plan.diff","data":{"added":1}}`
	if string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}
