package guestnote

import (
	"log/slog"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
)

// discard is a Sink that keeps nothing.
type discard struct{}

func (discard) Progress(float64, float64, string) {}
func (discard) Log(abi.LogLevel, string)          {}

// The cost of one note inside the host function, past wazero's call:
// a progress that is held (the common case under the rate limit), one
// that is sent, and a log message at a level the server log drops.
func BenchmarkNote(b *testing.B) {
	mem := make(memory, 4096)
	p, n := put(mem, 0, "12345 primes below 500000")
	quiet := slog.New(slog.DiscardHandler)
	b.Run("progress-held", func(b *testing.B) {
		c := New(Config{Sink: discard{}, Logger: quiet})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Progress(mem, float64(i), 0, p, n)
		}
	})
	b.Run("progress-sent", func(b *testing.B) {
		t := time.Unix(0, 0)
		c := New(Config{Sink: discard{}, Logger: quiet, Now: func() time.Time { t = t.Add(time.Second); return t }})
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Progress(mem, float64(i), 0, p, n)
		}
	})
	b.Run("log", func(b *testing.B) {
		c := New(Config{Sink: discard{}, Logger: quiet, Limits: Limits{LogCount: 1 << 30, LogTotalBytes: 1 << 30}})
		b.ReportAllocs()
		for b.Loop() {
			c.Log(mem, int32(abi.LogDebug), p, n)
		}
	})
}
