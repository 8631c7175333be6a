package transport

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Offers that go while a session lives. A reload that takes the last
// resource (or prompt) away removes it from the SDK, which sends
// notifications/resources/list_changed (prompts/list_changed) to every
// 2025-11-25 session and to the 2026-07-28 listeners that asked for it.
// What a client then asks depends on what it was told:
//
//   - a 2025-11-25 session was told its capabilities once, at initialize,
//     for its whole life: one that was told "resources" keeps being
//     served resources/list (now empty) and the SDK's own answers to
//     reads and gets (not found), so that the list_changed it heard
//     leads to the empty list it announces, never to -32601 for a method
//     its capabilities promised;
//   - a session that was never told, and every 2026-07-28 request (whose
//     capabilities come from server/discover, which no longer names
//     them), gets -32601: the methods are hidden as if nothing had been
//     offered.

// toldSessions are the 2025-11-25 sessions whose initialize answer named
// resources or prompts. Entries of closed sessions are dropped at the next
// initialize, so it holds at most the live sessions.
type toldSessions struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]toldKinds
}

type toldKinds struct{ resources, prompts bool }

// tell records what res (an initialize answer to ss) advertised.
func (s *Server) tell(ss *mcp.ServerSession, res *mcp.InitializeResult) {
	if ss == nil || res == nil || res.Capabilities == nil || isStateless(res.ProtocolVersion) {
		return
	}
	k := toldKinds{resources: res.Capabilities.Resources != nil, prompts: res.Capabilities.Prompts != nil}
	live := map[*mcp.ServerSession]bool{}
	for x := range s.mcp.Sessions() {
		live[x] = true
	}
	t := &s.told
	t.mu.Lock()
	defer t.mu.Unlock()
	for x := range t.m {
		if !live[x] {
			delete(t.m, x)
		}
	}
	if !k.resources && !k.prompts {
		return
	}
	if t.m == nil {
		t.m = map[*mcp.ServerSession]toldKinds{}
	}
	t.m[ss] = k
}

// wasTold reports whether ss was told at initialize that it may use what
// ("resources" or "prompts", as offering names them).
func (s *Server) wasTold(ss *mcp.ServerSession, what string) bool {
	if ss == nil {
		return false
	}
	t := &s.told
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.m[ss]
	if what == "prompts" {
		return k.prompts
	}
	return k.resources
}

// wasToldByID is wasTold for the session with id (an HTTP request's
// Mcp-Session-Id), false when there is none.
func (s *Server) wasToldByID(id, what string) bool {
	if id == "" {
		return false
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return s.wasTold(ss, what)
		}
	}
	return false
}
