package transport

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/printable"
	"github.com/toolhost/toolhost/registry"
)

// The _meta keys of the wire contract.
const (
	MetaIdempotencyKey = "toolhost/idempotency_key"
	MetaTimeoutMS      = "toolhost/timeout_ms"
	MetaBudget         = "toolhost/budget"
	MetaPriority       = "toolhost/priority"
	// MetaError carries the DispatchError envelope on a failed result.
	MetaError = "toolhost/error"
	// MetaRequestID is set on every result: the id of the call's audit
	// log line.
	MetaRequestID = "toolhost/request_id"
	// MetaTraceparent is an optional W3C trace context carried into logs.
	MetaTraceparent = "traceparent"
	// MetaToolTimeoutMS and MetaToolModule are set on each listed tool:
	// its per-attempt timeout and the module (path, sha256) serving it.
	MetaToolTimeoutMS = "toolhost/timeout_ms"
	MetaToolModule    = "toolhost/module"
	// MetaToolInstances is set on each listed tool: its instance mode in
	// force, "fresh" or "reuse" (warm instances per caller).
	MetaToolInstances = "toolhost/instances"
	// MetaToolName is set on each listed tool: its manifest name, the
	// tool's identity, when the wire name differs or not. A tools/call may
	// send it too (either form); it must then name the same tool as
	// params.name.
	MetaToolName = "toolhost/name"
)

// MaxIdempotencyKeyLen is the longest idempotency key accepted.
const MaxIdempotencyKeyLen = 255

// parseOptions reads the dispatch options from a tools/call _meta. A value
// of the wrong type or out of range is an error naming the key: the call is
// refused rather than run with an option silently dropped.
func parseOptions(meta map[string]any) (dispatcher.Options, error) {
	var o dispatcher.Options
	if v, ok := meta[MetaIdempotencyKey]; ok {
		s, ok := v.(string)
		if !ok || s == "" || len(s) > MaxIdempotencyKeyLen {
			return o, fmt.Errorf("_meta %q must be a non-empty string of at most %d bytes", MetaIdempotencyKey, MaxIdempotencyKeyLen)
		}
		if r, at, bad := printable.First(s); bad || !utf8.ValidString(s) {
			// Keys are scoped by identity and printed in the audit log:
			// a NUL or an escape in one must not be read as something else.
			if !bad {
				return o, fmt.Errorf("_meta %q must be valid UTF-8", MetaIdempotencyKey)
			}
			return o, fmt.Errorf("_meta %q must be printable text: it holds %U at byte %d", MetaIdempotencyKey, r, at)
		}
		o.IdempotencyKey = s
	}
	if v, ok := meta[MetaTimeoutMS]; ok {
		n, ok := integer(v)
		if !ok || n <= 0 || n > math.MaxInt64/int64(time.Millisecond) {
			return o, fmt.Errorf("_meta %q must be an integer > 0 (milliseconds)", MetaTimeoutMS)
		}
		o.Timeout = time.Duration(n) * time.Millisecond
	}
	if v, ok := meta[MetaBudget]; ok {
		n, ok := integer(v)
		if !ok || n < 0 || n > math.MaxInt32 {
			return o, fmt.Errorf("_meta %q must be an integer >= 0 (attempts you can afford)", MetaBudget)
		}
		b := int(n)
		o.Budget = &b
	}
	if v, ok := meta[MetaPriority]; ok {
		s, ok := v.(string)
		if !ok {
			return o, fmt.Errorf("_meta %q must be a string", MetaPriority)
		}
		o.Priority = s
	}
	return o, nil
}

// integer accepts a JSON number that is a whole number. JSON decoding gives
// float64; an exact integral float is fine, 1.5 is not.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

// instanceMode is the tool's instance mode in force as listed: a record
// that says nothing (a built-in) runs fresh.
func instanceMode(t *registry.Tool) string {
	if t.Instances == abi.InstancesReuse {
		return string(abi.InstancesReuse)
	}
	return string(abi.InstancesFresh)
}
