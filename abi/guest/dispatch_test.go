package guest_test

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
)

type benchArgs struct {
	Text string `json:"text"`
}

type benchCounts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

// registerBench registers bench.count once, when the benchmark or the
// allocation test first asks; the package's other tests find their own
// tools by name, since registration is for the whole process.
var registerBench = sync.OnceFunc(func() {
	guest.Register("bench.count", guest.Options{Idempotent: true, ReadOnly: true}, func(a benchArgs) (benchCounts, error) {
		return benchCounts{Words: len(strings.Fields(a.Text)), Lines: strings.Count(a.Text, "\n") + 1,
			Runes: utf8.RuneCountInString(a.Text), Bytes: len(a.Text)}, nil
	})
})

// BenchmarkDispatch is one call of a text.count-like tool through the
// SDK's dispatch, natively: the guest's own work per call, its
// allocations first (each is a mallocgc in every Go tool's call).
func BenchmarkDispatch(b *testing.B) {
	registerBench()
	args := []byte(`{"text":"the cat and the hat"}`)
	const want = `{"result":{"words":5,"lines":1,"runes":19,"bytes":19}}`
	b.ReportAllocs()
	for b.Loop() {
		if got := guest.Dispatch("bench.count", args); string(got) != want {
			b.Fatalf("Dispatch = %s, want %s", got, want)
		}
	}
}

// A call's allocations are each a mallocgc in every Go tool's guest, cold
// under a server's load: the SDK's own are one for the call's state and
// one for the response document, which a small result fills without
// growing. The rest of the ten are encoding/json's decoding of the
// arguments (the decoder, its error context and field stack, the struct
// and its string) and the tool's (strings.Fields, the result boxed).
func TestDispatchAllocations(t *testing.T) {
	registerBench()
	args := []byte(`{"text":"the cat and the hat"}`)
	if n := testing.AllocsPerRun(100, func() { guest.Dispatch("bench.count", args) }); n > 10 {
		t.Errorf("Dispatch allocates %v times per call, want at most 10 (17 before the envelope and the call's context were cut)", n)
	}
}
