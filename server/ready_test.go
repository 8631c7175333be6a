package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// startState is a start whose listing the test completes.
type startState struct {
	note   atomic.Pointer[string]
	listed chan struct{}
}

func (s *startState) StartingNote() string    { return *s.note.Load() }
func (s *startState) Listed() <-chan struct{} { return s.listed }

// /readyz is 503 with the progress while modules present at start still
// compile (the server already listens, /healthz answers), 200 once every
// module is listed, with the degraded note when there is one, and 503
// again at shutdown.
func TestReadyzWhileStarting(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	st := &startState{listed: make(chan struct{})}
	note := "starting: 3 of 20 modules listed, 17 compiling"
	st.note.Store(&note)
	degraded := ""
	h := readyz(&ready, st, func() string { return degraded }, nil)
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/readyz", nil))
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	if code, body := get(); code != http.StatusServiceUnavailable || body != note {
		t.Fatalf("starting: %d %q; want 503 %q", code, body, note)
	}
	done := ""
	st.note.Store(&done)
	if code, body := get(); code != http.StatusOK || body != "ready" {
		t.Fatalf("listed: %d %q; want 200 ready", code, body)
	}
	degraded = "degraded: redis away"
	if code, body := get(); code != http.StatusOK || body != degraded {
		t.Fatalf("degraded: %d %q", code, body)
	}
	ready.Store(false)
	if code, body := get(); code != http.StatusServiceUnavailable || body != "shutting down" {
		t.Fatalf("shutdown: %d %q", code, body)
	}
}
