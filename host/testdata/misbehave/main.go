// Command misbehave is a test-only tool module whose tools break the rules
// on purpose: they sleep, spin, panic, exit, trap, exhaust memory, flood
// their output, and report transient errors, so the host tests can check
// that each misbehaviour becomes the right error and the host keeps
// serving. A few well-behaved tools (state, nonce, now, echo) prove that
// every call gets a fresh instance with real clocks and randomness.
//
// Build (the host tests do this on demand through internal/testkit/testwasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o misbehave.wasm ./host/testdata/misbehave
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/toolhost/toolhost/abi/guest"
)

type none struct{}

type echoArgs struct {
	Text string `json:"text,omitempty"`
}

type sleepArgs struct {
	MS int `json:"ms"`
}

type sizeArgs struct {
	N int `json:"n"`
}

type exitArgs struct {
	Code int `json:"code"`
}

type flakyArgs struct {
	Fail         bool `json:"fail,omitempty"`
	RetryAfterMS int  `json:"retry_after_ms,omitempty"`
}

type chattyArgs struct {
	Stdout int `json:"stdout,omitempty"`
	Stderr int `json:"stderr,omitempty"`
}

// counter is package state. Each call runs in a fresh instance, so state
// must always see it at 0.
var counter int

// sink keeps grow's allocations reachable so the GC cannot reclaim them.
var sink [][]byte

func init() {
	guest.Register("echo", guest.Options{Description: "returns its arguments"},
		func(a echoArgs) (echoArgs, error) { return a, nil })
	guest.Register("sleep", guest.Options{Description: "time.Sleep for ms milliseconds"},
		func(a sleepArgs) (string, error) {
			time.Sleep(time.Duration(a.MS) * time.Millisecond)
			return "slept", nil
		})
	guest.Register("spin", guest.Options{Description: "loops forever on the CPU"},
		func(none) (int, error) {
			n := 0
			for {
				n++
			}
		})
	guest.Register("panic", guest.Options{Description: "writes to a nil map in the handler (the SDK recovers it)"},
		func(none) (int, error) {
			var m map[string]int
			m["boom"] = 1
			return 0, nil
		})
	guest.Register("gopanic", guest.Options{Description: "panics in another goroutine, where the SDK cannot recover it"},
		func(none) (int, error) {
			done := make(chan struct{})
			go func() {
				var m map[string]int
				m["boom"] = 1
				close(done)
			}()
			<-done
			return 0, nil
		})
	guest.Register("exit", guest.Options{Description: "os.Exit(code)"},
		func(a exitArgs) (int, error) {
			os.Exit(a.Code)
			return 0, nil
		})
	guest.Register("trap", guest.Options{Description: "loads from past the end of linear memory: a real wasm trap"},
		func(none) (int, error) {
			p := (*byte)(unsafe.Add(unsafe.Pointer(&sink), 0xFFFF_FFF0-uintptr(unsafe.Pointer(&sink))))
			return int(*p), nil
		})
	guest.Register("recurse", guest.Options{Description: "recurses without end: a fatal stack overflow"},
		func(none) (int, error) {
			debug.SetMaxStack(1 << 20)
			return recurse(0), nil
		})
	guest.Register("grow", guest.Options{Description: "allocates 1 MiB at a time until it dies"},
		func(none) (int, error) {
			// No need to touch the bytes: linear memory is host memory
			// from the moment memory.grow succeeds.
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		})
	guest.Register("flaky", guest.Options{Description: "fails transiently when fail is set"},
		func(a flakyArgs) (string, error) {
			if !a.Fail {
				return "ok", nil
			}
			err := errors.New("upstream said 429")
			if a.RetryAfterMS > 0 {
				return "", guest.TransientAfter(err, time.Duration(a.RetryAfterMS)*time.Millisecond)
			}
			return "", guest.Transient(err)
		})
	guest.Register("nonce", guest.Options{Description: "16 bytes from crypto/rand, hex"},
		func(none) (string, error) {
			var b [16]byte
			if _, err := rand.Read(b[:]); err != nil {
				return "", err
			}
			return hex.EncodeToString(b[:]), nil
		})
	guest.Register("rand", guest.Options{Description: "a number from math/rand/v2, whose seed the Go runtime draws at start"},
		func(none) (uint64, error) { return mrand.Uint64(), nil })
	guest.Register("chatty", guest.Options{Description: "writes stdout bytes to stdout and stderr bytes to stderr"},
		func(a chattyArgs) (string, error) {
			os.Stdout.WriteString(strings.Repeat("o", a.Stdout))
			os.Stderr.WriteString(strings.Repeat("e", a.Stderr))
			return "said it", nil
		})
	guest.Register("huge", guest.Options{Description: "returns a string of n bytes"},
		func(a sizeArgs) (string, error) { return strings.Repeat("x", a.N), nil })
	guest.Register("now", guest.Options{Description: "time.Now() in Unix milliseconds"},
		func(none) (int64, error) { return time.Now().UnixMilli(), nil })
	guest.Register("state", guest.Options{Description: "increments a package counter and returns it"},
		func(none) (int, error) {
			counter++
			return counter, nil
		})
	guest.Register("fail", guest.Options{Description: "returns an ordinary error"},
		func(none) (int, error) { return 0, fmt.Errorf("it went wrong") })
}

//go:noinline
func recurse(n int) int {
	var pad [64]byte
	pad[n%64] = byte(n)
	return recurse(n+1) + int(pad[0])
}

func main() {}
