package redisconn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/redisconn"
	"github.com/toolhost/toolhost/internal/testkit/redistest"
)

func nextChange(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no health change reported")
		return nil
	}
}

// A Redis slower than the timeout is down for the replica (the command
// fails, it does not wait), and up again by itself once it answers.
func TestSlowRedisIsDownThenBack(t *testing.T) {
	srv := redistest.Start(t)
	changes := make(chan error, 4)
	c, err := redisconn.Open(redisconn.Options{URL: srv.URL(), Timeout: 50 * time.Millisecond, Probe: 10 * time.Millisecond,
		OnChange: func(err error) { changes <- err }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ping := func(ctx context.Context) error { return c.Client.Ping(ctx).Err() }
	ctx := context.Background()
	if err := c.Do(ctx, ping); err != nil {
		t.Fatal(err)
	}
	admin, _ := redisconn.Open(redisconn.Options{URL: srv.URL(), Timeout: 5 * time.Second})
	defer admin.Close()
	// Every client's commands wait 3 s: slower than the 50 ms bound.
	if err := admin.Client.Do(ctx, "CLIENT", "PAUSE", "3000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, ping); !errors.Is(err, redisconn.ErrDown) {
		t.Fatalf("a command on a paused Redis: %v, want ErrDown", err)
	}
	if err := nextChange(t, changes); err == nil {
		t.Fatal("going down was reported without an error")
	}
	if err := c.Do(ctx, ping); !errors.Is(err, redisconn.ErrDown) {
		t.Fatalf("while down, Do must fail at once: %v", err)
	}
	if err := nextChange(t, changes); err != nil {
		t.Fatalf("recovery reported %v", err)
	}
	if err := c.Do(ctx, ping); err != nil || c.Err() != nil {
		t.Fatalf("after recovery: %v, %v", err, c.Err())
	}
}

func TestOpenRejectsBadURL(t *testing.T) {
	if _, err := redisconn.Open(redisconn.Options{URL: "http://x"}); err == nil {
		t.Fatal("an http URL was accepted")
	}
}
