package transport

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// sessionSlots counts MCP sessions over HTTP, in total and per caller:
// requests opening one (counted until their answer starts) and initialized
// sessions, each owned by the identity that opened it.
type sessionSlots struct {
	mu      sync.Mutex
	opening map[string]int    // by caller
	owners  map[string]string // session id → caller, for initialized sessions
}

// httpCaller is the token identity of r, "" when the server has no tokens.
func httpCaller(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// openSession admits a request that opens a session for caller, counting
// it until opened is called, so that concurrent initializes cannot pass
// the caps together. Only initialized sessions count besides: the SDK
// opens a session for any POST without a session id, before reading its
// body, and closes it in the background when the body turns out bad.
// A refusal returns the HTTP status and why.
func (s *Server) openSession(caller string) (status int, why string) {
	sl := &s.slots
	sl.mu.Lock()
	defer sl.mu.Unlock()
	total, mine := 0, sl.opening[caller]
	for _, n := range sl.opening {
		total += n
	}
	live := map[string]bool{}
	for ss := range s.mcp.Sessions() {
		// A stateless (2026-07-28) request is a session of its own for
		// the SDK; those count per caller instead (MaxStreamsPerCaller).
		if p := ss.InitializeParams(); p == nil || isStateless(p.ProtocolVersion) {
			continue
		}
		total++
		live[ss.ID()] = true
		if owner, ok := sl.owners[ss.ID()]; ok && owner == caller {
			mine++
		}
	}
	for id := range sl.owners {
		if !live[id] {
			delete(sl.owners, id) // closed or timed out
		}
	}
	if max := s.opts.MaxSessions; max > 0 && total >= max {
		return http.StatusServiceUnavailable, fmt.Sprintf("this server already has %d MCP sessions, its limit; close one or try later", total)
	}
	if max := s.opts.MaxSessionsPerCaller; max > 0 && mine >= max {
		return http.StatusTooManyRequests, fmt.Sprintf("caller %q already has %d MCP sessions, the limit for one caller; close one or try later", caller, mine)
	}
	if sl.opening == nil {
		sl.opening = map[string]int{}
	}
	sl.opening[caller]++
	return 0, ""
}

// opened ends the opening of a session by caller; id is the session the
// answer carries, if any.
func (s *Server) opened(caller, id string) {
	sl := &s.slots
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.opening[caller]--; sl.opening[caller] <= 0 {
		delete(sl.opening, caller)
	}
	if id != "" {
		if sl.owners == nil {
			sl.owners = map[string]string{}
		}
		sl.owners[id] = caller
	}
}
