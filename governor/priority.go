package governor

import (
	"context"
	"fmt"
)

// Priority is a draw's class. Among waiters for one quota, a higher class
// is served first; waiting raises a waiter's effective class (aging), so
// that no class starves.
type Priority int

// The priority classes, lowest first.
const (
	Background Priority = iota
	Normal
	Interactive
	Critical
)

var priorityNames = [...]string{"background", "normal", "interactive", "critical"}

// String returns the class's name as callers spell it.
func (p Priority) String() string {
	if p < Background || p > Critical {
		return fmt.Sprintf("priority(%d)", int(p))
	}
	return priorityNames[p]
}

// MarshalText encodes the class as its name.
func (p Priority) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText decodes a class name (see ParsePriority).
func (p *Priority) UnmarshalText(b []byte) error {
	v, err := ParsePriority(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// ParsePriority parses "critical", "interactive", "normal" or
// "background". Any other string, the empty one included, is an error
// wrapping ErrInvalid.
func ParsePriority(s string) (Priority, error) {
	for i, n := range priorityNames {
		if s == n {
			return Priority(i), nil
		}
	}
	return 0, fmt.Errorf("%w: priority %q is not one of critical, interactive, normal, background", ErrInvalid, s)
}

type priorityKey struct{}

// WithPriority returns ctx carrying p: draws made on ctx's behalf without
// a priority of their own (egress requests of a tool call) use it.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// PriorityFrom returns the priority ctx carries, and whether it carries one.
func PriorityFrom(ctx context.Context) (Priority, bool) {
	p, ok := ctx.Value(priorityKey{}).(Priority)
	return p, ok
}
