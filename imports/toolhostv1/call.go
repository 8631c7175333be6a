package toolhostv1

import (
	"context"
	"net"
	"net/url"

	"github.com/toolhost/toolhost/abi"
)

// Call is one guest call's toolhost_v1 state: which module is calling,
// its grant, and what the host functions hold for it between calls
// (http_response reads what http_request left). The caller makes a fresh
// one for every instance it runs and puts it in the context with
// WithCall; host functions called without one fail.
type Call struct {
	module  string
	grant   *grant           // nil: the module has no grant
	loading bool             // describe, not a call: no egress
	pending []byte           // the last result JSON, until http_response copies it
	refused *abi.EgressError // the first request the host refused, if any
	// upstream is the first upstream that failed one of the call's
	// requests (a broken connection, a 5xx answer), if any.
	upstream *UpstreamFailedError
}

// Call returns the state of one call of module (a file name, as grants
// are keyed): its requests go as far as the module's grant allows.
func (e *Grants) Call(module string) *Call {
	return &Call{module: module, grant: e.grants[module]}
}

// Loading returns the state of module while it is being loaded
// (_initialize, toolhost_describe): there is no call yet, so every
// request is refused.
func Loading(module string) *Call {
	return &Call{module: module, loading: true}
}

type callKey struct{}

// WithCall returns ctx carrying c, for the host functions the guest calls
// while running under ctx.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// callFrom returns the call ctx carries, or nil.
func callFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

// EgressRefusedError is a failed call during which the host refused one
// of the tool's egress requests: the grant did not allow it, it was
// malformed, or the rate governor could not grant it in time. Such a
// failure is the caller's or the operator's doing, not the tool's (a
// client could otherwise open a granted tool's circuit breaker by asking
// it for URLs it may not fetch), so the dispatcher does not count it
// against the tool. Err is the call's own error (an *abi.Error or a
// *host.Fault), reachable with errors.As.
type EgressRefusedError struct {
	Err     error
	Refusal *abi.EgressError
}

func (e *EgressRefusedError) Error() string { return e.Err.Error() }

// Unwrap returns the call's own error.
func (e *EgressRefusedError) Unwrap() error { return e.Err }

// EgressRefusal returns the first egress request the host refused.
func (e *EgressRefusedError) EgressRefusal() *abi.EgressError { return e.Refusal }

// UpstreamFailedError is a failed call during which an upstream failed
// one of the call's egress requests: the connection could not be made or
// broke (refused, reset, a TLS handshake the server broke off, a name that
// does not resolve), the upstream did not answer before the call's
// deadline, or it answered with a 5xx status. The destination is usually
// the caller's choice (a URL in the arguments), so the failure says
// nothing about the tool's own health: the dispatcher does not count it
// against the tool's breaker, or any caller could open a fetching tool's
// breaker for everyone with a few calls to a server of its own. Err is
// the call's own error (an *abi.Error or a *host.Fault), reachable with
// errors.As; the error the caller sees is unchanged.
type UpstreamFailedError struct {
	Err error
	// Destination is the upstream's host and port ("example.com:443"),
	// as the governor's host reports name it.
	Destination string
	// Reason says how it failed ("answered 503", the connection error).
	Reason string
}

func (e *UpstreamFailedError) Error() string { return e.Err.Error() }

// Unwrap returns the call's own error.
func (e *UpstreamFailedError) Unwrap() error { return e.Err }

// EgressDestination returns the upstream that failed, host and port.
func (e *UpstreamFailedError) EgressDestination() string { return e.Destination }

// Blame wraps a failed call's error in an *EgressRefusedError when the
// host refused one of its requests, else in an *UpstreamFailedError when
// an upstream failed one; otherwise it returns err as it is.
func (c *Call) Blame(err error) error {
	switch {
	case err == nil:
		return nil
	case c.refused != nil:
		return &EgressRefusedError{Err: err, Refusal: c.refused}
	case c.upstream != nil:
		u := *c.upstream
		u.Err = err
		return &u
	}
	return err
}

// upstreamFailed records the first upstream failure of the call.
func (c *Call) upstreamFailed(u *url.URL, reason string) {
	if c.upstream == nil && u != nil {
		c.upstream = &UpstreamFailedError{Destination: net.JoinHostPort(u.Hostname(), portOf(u)), Reason: reason}
	}
}

// refusal reports whether the host, not the network or the upstream,
// turned a request down.
func refusal(e *abi.EgressError) bool {
	switch e.Kind {
	case abi.EgressDenied, abi.EgressInvalid, abi.EgressRateLimited:
		return true
	}
	return false
}
