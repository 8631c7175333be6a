package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/registry"
)

// Kind classifies a failed dispatch. The set is fixed by the wire contract.
type Kind string

// The kinds a DispatchError can have.
const (
	KindTimeout        Kind = "timeout"
	KindTransient      Kind = "transient"
	KindSchema         Kind = "schema"
	KindNotFound       Kind = "not_found"
	KindInternal       Kind = "internal"
	KindBudgetExceeded Kind = "budget_exceeded"
	KindCircuitOpen    Kind = "circuit_open"
	KindRateLimited    Kind = "rate_limited"
)

// JSON-RPC codes the envelope carries.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
)

// Code returns the JSON-RPC code the contract assigns to k.
func (k Kind) Code() int {
	switch k {
	case KindNotFound:
		return CodeMethodNotFound
	case KindSchema:
		return CodeInvalidParams
	default:
		return CodeInternal
	}
}

// DispatchError is the one envelope every failed dispatch yields. Match a
// kind with errors.Is against the Err* sentinels, or take the whole
// envelope with errors.As.
type DispatchError struct {
	Kind        Kind   `json:"kind"`
	Message     string `json:"message"`
	Attempts    int    `json:"attempts"`
	JSONRPCCode int    `json:"jsonrpc_code"`
	// RetryAfterMS is the guest's retry_after_ms on the last attempt, if
	// it gave one; for rate_limited, when room frees, if known.
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	// TimeoutCapped, on a timeout, says that the caller asked for a longer
	// per-attempt timeout than the tool allows and which setting capped
	// it; absent otherwise. The message says the same in words.
	TimeoutCapped *TimeoutCap `json:"timeout_capped,omitempty"`

	cause error
	// starved marks a timeout the host, not the guest, used up (see
	// hostStarved): it does not count against the tool's breaker.
	starved bool
}

// TimeoutCap is how a caller's toolhost/timeout_ms was capped.
type TimeoutCap struct {
	// RequestedMS is the caller's toolhost/timeout_ms.
	RequestedMS int64 `json:"requested_ms"`
	// TimeoutMS is the per-attempt timeout the call ran under.
	TimeoutMS int64 `json:"timeout_ms"`
	// By names the setting that capped it: CapToolTimeout or
	// CapMaxTimeout.
	By string `json:"by"`
}

// The settings a caller's timeout can be capped by.
const (
	// CapToolTimeout: the tool's own timeout (its manifest's timeout_ms,
	// or timeout in its [tools."NAME"] section), with no max_timeout
	// above it.
	CapToolTimeout = "timeout"
	// CapMaxTimeout: max_timeout in the tool's [tools."NAME"] section.
	CapMaxTimeout = "max_timeout"
)

// Sentinels for errors.Is: a DispatchError is one of these when the kinds
// match.
var (
	ErrTimeout        = &DispatchError{Kind: KindTimeout}
	ErrTransient      = &DispatchError{Kind: KindTransient}
	ErrSchema         = &DispatchError{Kind: KindSchema}
	ErrNotFound       = &DispatchError{Kind: KindNotFound}
	ErrInternal       = &DispatchError{Kind: KindInternal}
	ErrBudgetExceeded = &DispatchError{Kind: KindBudgetExceeded}
	ErrCircuitOpen    = &DispatchError{Kind: KindCircuitOpen}
	ErrRateLimited    = &DispatchError{Kind: KindRateLimited}
)

func (e *DispatchError) Error() string {
	return fmt.Sprintf("%s: %s (attempts: %d)", e.Kind, e.Message, e.Attempts)
}

// Is reports whether target is a DispatchError of the same kind.
func (e *DispatchError) Is(target error) bool {
	t, ok := target.(*DispatchError)
	return ok && t.Kind == e.Kind
}

// Unwrap returns the underlying cause: a guest's *abi.Error, a host fault,
// a context error, or nil.
func (e *DispatchError) Unwrap() error { return e.cause }

// newError builds an envelope with the code the kind implies.
func newError(kind Kind, attempts int, cause error, format string, args ...any) *DispatchError {
	return &DispatchError{Kind: kind, Message: fmt.Sprintf(format, args...), Attempts: attempts,
		JSONRPCCode: kind.Code(), cause: cause}
}

// classify maps what one attempt returned onto the envelope. attemptCtx is
// the attempt's context (with its timeout), callerCtx the caller's.
func classify(tool *registry.Tool, err error, attempt int, attemptCtx, callerCtx context.Context, timeout time.Duration) *DispatchError {
	var guestErr *abi.Error
	var schemaErr *registry.SchemaError
	switch {
	case errors.As(err, &guestErr):
		e := newError(Kind(guestErr.Kind), attempt, err, "%s", guestErr.Message)
		e.RetryAfterMS = guestErr.RetryAfterMS
		return e
	case errors.As(err, &schemaErr):
		return newError(KindSchema, attempt, err, "%s", schemaErr.Error())
	case callerCtx.Err() != nil:
		if errors.Is(callerCtx.Err(), context.DeadlineExceeded) {
			return newError(KindTimeout, attempt, err, "tool %s: the caller's deadline passed", tool.Name)
		}
		return newError(KindInternal, attempt, err, "tool %s: the call was cancelled by its caller", tool.Name)
	case attemptCtx.Err() != nil:
		return newError(KindTimeout, attempt, err, "tool %s did not finish within %s", tool.Name, timeout)
	default:
		return newError(KindInternal, attempt, err, "%v", err)
	}
}
