package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/events"
	"github.com/toolhost/toolhost/registry"
)

// callRow is one finished call, as the calls view and the live stream
// show it.
type callRow struct {
	Time       string  `json:"time"`
	Tool       string  `json:"tool"`
	Caller     string  `json:"caller"`
	Outcome    string  `json:"outcome"`
	Attempts   int     `json:"attempts"`
	DurationMS float64 `json:"duration_ms"`
}

// rowOf is a dispatch.result event as a row; ok is false for any other
// event.
func rowOf(e events.Event) (callRow, bool) {
	res, ok := e.Data.(dispatcher.ResultEvent)
	if !ok {
		return callRow{}, false
	}
	outcome := "ok"
	switch {
	case res.Cancelled:
		outcome = "cancelled"
	case !res.OK:
		outcome = string(res.Kind)
	}
	return callRow{Time: e.Time.UTC().Format("15:04:05.000"), Tool: res.Tool, Caller: e.Caller, Outcome: outcome,
		Attempts: res.Attempts, DurationMS: res.DurationMS}, true
}

// matches is the calls view's filter: a substring of the tool, the caller
// or the outcome.
func (r callRow) matches(q string) bool {
	return q == "" || strings.Contains(r.Tool, q) || strings.Contains(r.Caller, q) || strings.Contains(r.Outcome, q)
}

// recent keeps the last finished calls, in a ring, so that adding one
// costs the same however full.
type recent struct {
	mu   sync.Mutex
	rows []callRow // a ring of at most max rows; next is the oldest once full
	next int
	max  int
}

func newRecent(max int) *recent { return &recent{max: max} }

// observe hands each the bus's events of the prefixes, on the publisher's
// goroutine (events.Bus.Observe), until ctx ends.
func observe(ctx context.Context, bus *events.Bus, prefixes []string, each func(events.Event)) {
	sub := bus.Observe(each, prefixes...)
	context.AfterFunc(ctx, sub.Close)
}

// follow hands each the bus's events of the prefixes, on a goroutine of
// its own, until ctx ends: for what is too slow for the publisher's path.
func follow(ctx context.Context, bus *events.Bus, prefixes []string, each func(events.Event)) {
	sub := bus.Subscribe(1024, prefixes...)
	go func() {
		defer sub.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-sub.C:
				if !ok {
					return
				}
				each(e)
			}
		}
	}()
}

func (rc *recent) add(row callRow) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.rows) < rc.max {
		rc.rows = append(rc.rows, row)
		return
	}
	rc.rows[rc.next] = row
	rc.next = (rc.next + 1) % rc.max
}

// snapshot is the rows, oldest first.
func (rc *recent) snapshot() []callRow {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append(append(make([]callRow, 0, len(rc.rows)), rc.rows[rc.next:]...), rc.rows[:rc.next]...)
}

// seesCall: the caller may see this call, its own (or anyone's, for a
// caller who sees everything) of a tool it may list.
func (c *Console) seesCall(v viewer, reg *registry.Registry, row callRow) bool {
	return (v.all || row.Caller == v.identity) && c.visibleTool(v, reg, row.Tool)
}

// calls: the recent calls the caller may see, newest first.
func (c *Console) calls(v viewer, reg *registry.Registry, q string) []callRow {
	rows := c.recent.snapshot()
	var out []callRow
	for i := len(rows) - 1; i >= 0; i-- {
		if c.seesCall(v, reg, rows[i]) && rows[i].matches(q) {
			out = append(out, rows[i])
		}
	}
	return out
}

// serveCalls streams the calls the caller may see as they finish, as
// Server-Sent Events (`data: <row JSON>`), until the client leaves or
// CloseStreams. The page reads it with fetch, which can send the token.
func (c *Console) serveCalls(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok || c.opts.Events == nil {
		http.Error(w, "no live calls on this server", http.StatusNotImplemented)
		return
	}
	v := c.viewerOf(r)
	release, err := c.streams.acquire(v.identity)
	if err != nil {
		w.Header().Set("Retry-After", "10")
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	}
	defer release()
	sub := c.opts.Events.SubscribeFilter(256, events.Filter{Prefixes: []string{dispatcher.EventResult}, Scoped: !v.all, Caller: v.identity})
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": toolhost console calls\n\n")
	flusher.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			row, ok := rowOf(e)
			if !ok || !c.seesCall(v, c.registry(), row) {
				continue
			}
			data, _ := json.Marshal(row)
			fmt.Fprintf(w, "data: %s\n\n", data)
			flusher.Flush()
		}
	}
}

// streamCount bounds the live streams, in all and per identity.
type streamCount struct {
	mu          sync.Mutex
	n           int
	per         map[string]int
	max, perMax int
}

func newStreamCount(max, perMax int) *streamCount {
	return &streamCount{per: map[string]int{}, max: max, perMax: perMax}
}

func (s *streamCount) acquire(identity string) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n >= s.max {
		return nil, fmt.Errorf("the console has %d live call streams open, its limit; close a console tab", s.max)
	}
	if s.per[identity] >= s.perMax {
		return nil, fmt.Errorf("this identity has %d live call streams open, its limit; close a console tab", s.perMax)
	}
	s.n++
	s.per[identity]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.n--
			if s.per[identity]--; s.per[identity] == 0 {
				delete(s.per, identity)
			}
		})
	}, nil
}
