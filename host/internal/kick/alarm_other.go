//go:build !linux

package kick

// newAlarm: only Linux has one here, so elsewhere deadlines rely on the Go
// runtime's timers alone.
func newAlarm() alarm { return nil }
