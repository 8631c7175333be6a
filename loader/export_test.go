package loader

import "context"

// HoldBackground makes every background load wait (until its Live closes)
// for release, so a test sees the start before they list anything.
func HoldBackground() (release func()) {
	gate := make(chan struct{})
	backgroundHook = func(ctx context.Context) {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	return func() { close(gate) }
}

// ResetBackground undoes HoldBackground.
func ResetBackground() { backgroundHook = nil }
