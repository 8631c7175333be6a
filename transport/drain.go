package transport

import (
	"context"
	"net/http"
	"sync"
)

// inflight counts requests that must finish before a clean shutdown: tool
// calls on any transport and non-GET HTTP requests (whose responses carry
// call results). Long-lived GET streams are not counted: they never finish
// by themselves.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to zero while someone waits
}

func (f *inflight) enter() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inflight) exit() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

// wait returns when nothing is in flight or ctx ends.
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *inflight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			f.enter()
			defer f.exit()
		}
		h.ServeHTTP(w, r)
	})
}

// Drain waits for in-flight calls and requests to finish (or ctx to end),
// then closes every MCP session so that streams end and an http.Server's
// Shutdown can complete. Call it after the listener stops accepting.
//
// When ctx ends first, Drain returns ctx.Err() at once and the sessions
// are closed in the background: the SDK's session Close waits for the
// session's in-flight requests, which would hold the caller past its
// deadline.
func (s *Server) Drain(ctx context.Context) error {
	closeAll := func() {
		for ss := range s.mcp.Sessions() {
			_ = ss.Close()
		}
	}
	if err := s.inflight.wait(ctx); err != nil {
		go closeAll()
		return err
	}
	closeAll()
	return nil
}
