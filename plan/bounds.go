package plan

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/toolhost/toolhost/dispatcher"
)

// Bounds cap the bytes one session handles, so that a small plan whose
// references multiply (a step's arguments naming an earlier result many
// times, that result echoed into the next step's arguments, and so on)
// cannot grow without limit. A zero field means no bound.
type Bounds struct {
	// MaxArgsBytes caps each step's arguments after $ref substitution,
	// the same cap a single call's arguments have. The size is counted
	// before the arguments are built, and counting stops as soon as it
	// passes the cap: the step fails with schema, which the planner can
	// route around.
	MaxArgsBytes int
	// MaxResultBytes caps each step's result, the same cap a guest's
	// response has. A larger result fails the step with internal.
	MaxResultBytes int
	// MaxSessionBytes caps the bytes of arguments and results the
	// session's log holds (plans, resolved arguments, results; the
	// session result repeats them in its history and revisions, so it is
	// at most about three times this). A step whose arguments or result
	// would pass it is not kept and the session ends with fatal_error
	// (budget_exceeded).
	MaxSessionBytes int
}

// heldBytes is what an event adds to the session's payload.
func heldBytes(e Event) int {
	n := len(e.Args) + len(e.Result)
	for _, s := range e.Steps {
		n += len(s.Args) + len(s.Result)
	}
	return n
}

// overSession reports whether holding n more bytes passes the session
// bound, and the error that ends the session if so.
func (r *run) overSession(stepID int, what string, n int) *Error {
	limit := r.cfg.Bounds.MaxSessionBytes
	if limit <= 0 || r.held+n <= limit {
		return nil
	}
	if stepID != 0 {
		what = fmt.Sprintf("step %d's %s", stepID, what)
	}
	return &Error{Kind: ErrorKind(dispatcher.KindBudgetExceeded), StepID: stepID, Message: fmt.Sprintf(
		"the session holds %d bytes of arguments and results; the %s of %d bytes would pass this server's limit of %d bytes per session",
		r.held, what, n, limit)}
}

// tooLargeResult is the step error for a result over MaxResultBytes.
func (r *run) tooLargeResult(stepID int, n int) *Error {
	limit := r.cfg.Bounds.MaxResultBytes
	if limit <= 0 || n <= limit {
		return nil
	}
	return &Error{Kind: ErrorKind(dispatcher.KindInternal), StepID: stepID, Message: fmt.Sprintf(
		"step %d's result is %d bytes, over this server's limit of %d bytes per result", stepID, n, limit)}
}

// encodedSize is the length of v's canonical encoding (encodeJSON), or
// limit+1 as soon as it is known to be more than limit: counting visits
// at most about limit bytes' worth of values, however often a shared
// value repeats, so a value that would encode to gigabytes costs no more
// to refuse than one just over the limit.
func encodedSize(v any, limit int) int {
	n := 0
	var count func(v any) bool // false: over the limit
	count = func(v any) bool {
		switch x := v.(type) {
		case nil:
			n += 4
		case bool:
			n += len(strconv.FormatBool(x))
		case json.Number:
			n += len(x)
		case string:
			n += stringSize(x)
		case []any:
			n += 2 + max(len(x)-1, 0)
			for _, e := range x {
				if n > limit || !count(e) {
					return false
				}
			}
		case map[string]any:
			n += 2 + max(len(x)-1, 0)
			for k, e := range x {
				n += stringSize(k) + 1
				if n > limit || !count(e) {
					return false
				}
			}
		default:
			// Only decoded JSON values reach here.
			b, _ := json.Marshal(x)
			n += len(b)
		}
		return n <= limit
	}
	if !count(v) {
		return limit + 1
	}
	return n
}

// stringSize is the length of s as encodeJSON writes it: quoted, with
// control characters, quotes and backslashes escaped, invalid UTF-8 as
// \ufffd, and U+2028/U+2029 escaped (HTML escaping is off).
func stringSize(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}
