package dispatcher

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/events"
)

func TestEventsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		drain := subscribe(t, bus)
		f := &fakeTool{script: []step{{err: transient(0)}, {err: transient(0)}, {}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Events: bus, Rand: fixedRand(0),
			Breaker: breaker.Settings{Failures: 100}})
		if _, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{IdempotencyKey: "k"}}); err != nil {
			t.Fatal(err)
		}
		var got []string
		var lastSeq uint64
		for _, e := range drain() {
			if e.Seq <= lastSeq {
				t.Fatalf("seq %d after %d", e.Seq, lastSeq)
			}
			lastSeq = e.Seq
			got = append(got, describe(e))
		}
		want := []string{
			"dispatch.attempt t k #1 deadline+1s",
			"dispatch.retry t k #1 100ms transient",
			"dispatch.attempt t k #2 deadline+1s",
			"dispatch.retry t k #2 400ms transient",
			"dispatch.attempt t k #3 deadline+1s",
			"dispatch.result t k ok attempts=3 500ms",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestBreakerStateEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus := events.NewBus(nil)
		drain := subscribe(t, bus)
		f := &fakeTool{script: []step{{err: internalErr}, {}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Events: bus,
			Breaker: breaker.Settings{Failures: 1, Cooldown: time.Second, Jitter: -1}})
		d.Call(context.Background(), Call{Tool: "t"}) //nolint:errcheck
		time.Sleep(time.Second)
		d.Call(context.Background(), Call{Tool: "t"}) //nolint:errcheck
		var got []string
		for _, e := range drain() {
			if b, ok := e.Data.(BreakerEvent); ok {
				got = append(got, b.From+"->"+b.To)
			}
		}
		if want := "closed->open open->half_open half_open->closed"; strings.Join(got, " ") != want {
			t.Fatalf("breaker events %v, want %s", got, want)
		}
	})
}

func describe(e events.Event) string {
	switch v := e.Data.(type) {
	case AttemptEvent:
		return fmt.Sprintf("%s %s %s #%d deadline+%v", e.Type, v.Tool, v.Key, v.Attempt, v.Deadline.Sub(e.Time))
	case RetryEvent:
		return fmt.Sprintf("%s %s %s #%d %v %s", e.Type, v.Tool, v.Key, v.Attempt, time.Duration(v.DelayMS*float64(time.Millisecond)), v.Reason)
	case ResultEvent:
		status := "ok"
		if !v.OK {
			status = string(v.Kind)
		}
		return fmt.Sprintf("%s %s %s %s attempts=%d %v", e.Type, v.Tool, v.Key, status, v.Attempts, time.Duration(v.DurationMS*float64(time.Millisecond)))
	}
	return e.Type
}

func TestOnRetryTellsTheCallerOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeTool{script: []step{{err: transient(0)}, {err: transient(0)}, {}}}
		d := New(newRegistry(t, toolSpec{name: "t", handler: f}), Config{Rand: fixedRand(0)})
		var got []string
		onRetry := func(e RetryEvent) { got = append(got, fmt.Sprintf("%s#%d %v", e.Tool, e.Attempt, e.DelayMS)) }
		if _, err := d.Call(context.Background(), Call{Tool: "t", Options: Options{OnRetry: onRetry}}); err != nil {
			t.Fatal(err)
		}
		if want := "t#1 100 t#2 400"; strings.Join(got, " ") != want {
			t.Fatalf("OnRetry saw %q, want %q (with no bus at all)", strings.Join(got, " "), want)
		}
	})
}
