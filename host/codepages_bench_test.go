package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// BenchmarkCallAfterCodeRelease is what a module's first call after an
// idle period pays for its code pages having left memory (on Linux, where
// code loaded from the cache is mapped from the entry): each iteration
// makes one fresh text.count call of tools-src/text with its code
// compiled in the process (anon-cpu-ms/op: an anonymous mapping, as all
// code was before), one with its code mapped from the cache and resident
// (kept-cpu-ms/op), lets those pages go, and makes another
// (released-cpu-ms/op), charging each the process CPU its call took, so
// the arms see the same load.
func BenchmarkCallAfterCodeRelease(b *testing.B) {
	ctx := context.Background()
	path := testwasm.Go(b, "./tools-src/text")
	dir := b.TempDir()
	load := func() *host.Module {
		rt := newRuntime(b, host.Config{CacheDir: dir})
		m, err := rt.LoadFile(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	anon := load() // compiles in the process, and fills the cache
	m := load()    // from the cache: mapped
	args := []byte(`{"text":"the cat and the hat"}`)
	call := func(m *host.Module) time.Duration {
		start := processCPU()
		if _, err := m.Call(ctx, "text.count", args, host.Limits{}); err != nil {
			b.Fatal(err)
		}
		return processCPU() - start
	}
	call(anon)
	call(m)
	var anonymous, kept, released time.Duration
	for b.Loop() {
		anonymous += call(anon)
		kept += call(m)
		m.ReleaseCodePages()
		released += call(m)
	}
	b.ReportMetric(float64(anonymous)/float64(time.Millisecond)/float64(b.N), "anon-cpu-ms/op")
	b.ReportMetric(float64(kept)/float64(time.Millisecond)/float64(b.N), "kept-cpu-ms/op")
	b.ReportMetric(float64(released)/float64(time.Millisecond)/float64(b.N), "released-cpu-ms/op")
}
