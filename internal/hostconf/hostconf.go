// Package hostconf holds the settings of the sandbox that an operator
// writes: what one call may use (Limits), the bounds of warm instances
// (Reuse) and what a module may reach over the network (Grant). They live
// apart from host and imports/toolhostv1, which alias them, so that the
// config file's checker can fill them in without linking WebAssembly.
// The defaults for zero fields are the host's and egress's to apply.
package hostconf

import (
	"net/netip"
	"time"
)

// Limits bound what one call may use. A zero field means "inherit": from the
// host.Config, then from the host's defaults.
type Limits struct {
	// MemoryBytes caps the instance's linear memory; memory.grow past it
	// fails inside the guest (a Go guest then dies with "out of memory",
	// which the caller sees as an internal error).
	MemoryBytes uint64
	// OutputBytes caps the response JSON; a larger response is an internal
	// error, not a truncated result.
	OutputBytes uint32
	// LogBytes caps what the guest may write to stdout and stderr in one
	// call. What fits is logged as one line; the rest is counted and
	// dropped.
	LogBytes int
}

// Reuse configures warm instances: tools whose manifest says "instances":
// "reuse" may serve a caller's calls from instances kept between that
// caller's calls (see host.Request.Reuse). The zero value turns reuse on with
// every bound at its default.
type Reuse struct {
	// Off turns reuse off everywhere (serve --reuse=never): every call
	// gets a fresh instance, whatever the manifests say.
	Off bool
	// MaxPerTool bounds the warm instances one tool holds, all callers
	// together, in a call, idle or being warmed; 0 means 8. A call that
	// finds none of its caller's idle and no room runs in a one-off fresh
	// instance, after the tool's least recently used idle instance (of
	// any caller) has been retired to make room, when there is one.
	MaxPerTool int
	// MaxTotal bounds the warm instances of every tool together; 0 means
	// 64. Room is made as for MaxPerTool.
	MaxTotal int
	// MaxUses retires an instance after this many calls; 0 means 1000.
	MaxUses int
	// IdleTimeout retires an instance idle this long; 0 means 60 s.
	IdleTimeout time.Duration
	// MemoryHighWater retires an instance whose linear memory has grown
	// past it (checked after each call); 0 means 32 MiB.
	MemoryHighWater uint64
	// Now is the clock idle time is measured with; nil means time.Now.
	// Tests inject one.
	Now func() time.Time
}

// Grant is what one module may reach. Zero fields take the documented
// defaults; Hosts has none: a grant without hosts reaches nothing.
type Grant struct {
	// Hosts are the host patterns a request (and every redirect hop) may
	// go to: exact names or IP literals, or "*.suffix"; optionally with
	// ":PORT".
	Hosts []string
	// Methods are the HTTP methods allowed; empty means GET and HEAD.
	Methods []string
	// Schemes are the URL schemes allowed; empty means https only (an
	// injected API key must not cross the network in clear).
	Schemes []string
	// MaxRequestBytes caps a request body; 0 means 1 MiB.
	MaxRequestBytes int64
	// MaxResponseBytes caps a response body; 0 means 1 MiB.
	MaxResponseBytes int64
	// Headers are injected into requests to hosts matching each pattern
	// (the most specific pattern wins), replacing any header of the same
	// name the guest set. The guest never sees them.
	Headers map[string]map[string]string
	// AllowNetworks are address ranges a request may dial although they
	// are loopback, private, link-local, metadata or otherwise not
	// public. Without them such addresses are refused, whatever name led
	// there.
	AllowNetworks []netip.Prefix
}
