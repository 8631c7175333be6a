// Command memtool is the module the memory benchmark (internal/cmd/bench/mem)
// loads: a Go SDK guest with <prefix>.count (text.count's work) and
// <prefix>.hold (sleeps ms milliseconds, to keep a call in flight). The
// prefix is set at link time so that one source gives as many distinct
// modules as the readiness test needs:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -ldflags '-X main.prefix=m7' -o m7.wasm ./internal/cmd/bench/memtool
package main

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// prefix names this build's tools (set with -ldflags -X).
var prefix = "mem"

type countArgs struct {
	Text string `json:"text"`
}

type counts struct {
	Words int `json:"words"`
	Lines int `json:"lines"`
	Runes int `json:"runes"`
	Bytes int `json:"bytes"`
}

type holdArgs struct {
	MS int `json:"ms"`
}

func init() {
	opts := guest.Options{Idempotent: true, ReadOnly: true, Instances: abi.InstancesReuse}
	guest.Register(prefix+".count", opts, func(a countArgs) (counts, error) {
		lines := strings.Count(a.Text, "\n")
		if a.Text != "" && !strings.HasSuffix(a.Text, "\n") {
			lines++
		}
		return counts{len(strings.Fields(a.Text)), lines, utf8.RuneCountInString(a.Text), len(a.Text)}, nil
	})
	guest.Register(prefix+".hold", opts, func(a holdArgs) (string, error) {
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		return "held", nil
	})
}

func main() {}
