package storm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// A small, fast run of both arms: the machinery works end to end (real
// module, egress, governor, upstream on loopback) and the report, plot and
// doc update come out. The full experiment is `make storm`, not CI.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a wasm module")
	}
	module := testwasm.Go(t, "./host/testdata/egress")
	var progress bytes.Buffer
	r, err := Run(context.Background(), Options{Module: module, Rate: 100, Burst: 5, Interactive: 1, Background: 2,
		InteractiveCalls: 5, BackgroundCalls: 10, Think: 10 * time.Millisecond, MaxDuration: 20 * time.Second,
		CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Arms) != 2 || !r.Arms[1].Governed {
		t.Fatalf("arms: %+v", r.Arms)
	}
	for _, a := range r.Arms {
		if a.Succeeded != 25 || a.Failed != 0 || a.UpstreamOK < 25 {
			t.Errorf("arm %s: %+v", a.Name, a)
		}
	}
	md := r.Markdown()
	if !strings.Contains(md, "| a: own backoff |") || !strings.Contains(md, "| b: governor |") {
		t.Fatalf("table:\n%s", md)
	}
	dir := t.TempDir()
	png := filepath.Join(dir, "storm.png")
	if err := r.Plot(png); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatal("the plot is not a PNG")
	}
	doc := filepath.Join(dir, "GOVERNOR.md")
	os.WriteFile(doc, []byte("# x\n\n"+beginMarker+"\nold\n"+endMarker+"\nafter\n"), 0o644)
	if err := r.UpdateDoc(doc, "storm.png", "make storm"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(doc)
	if s := string(b); strings.Contains(s, "old") || !strings.Contains(s, "| b: governor |") || !strings.HasSuffix(s, endMarker+"\nafter\n") {
		t.Fatalf("doc:\n%s", s)
	}
}

func TestPercentiles(t *testing.T) {
	var ls []time.Duration
	for i := 1; i <= 100; i++ {
		ls = append(ls, time.Duration(i)*time.Millisecond)
	}
	if p := percentiles(ls); p.P50 != 50*time.Millisecond || p.P99 != 99*time.Millisecond || p.N != 100 {
		t.Fatalf("%+v", p)
	}
	if p := percentiles(nil); p.N != 0 {
		t.Fatalf("%+v", p)
	}
}
