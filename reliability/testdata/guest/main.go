// Command guest is a test-only Go tool module for the reliability suite:
// the hostile behaviours the host tests' misbehave module does not have
// (100 MB of output written the way a real program writes it, in chunks;
// reaching for files, environment and arguments) and a randomly failing
// tool for the soak test's injected faults.
//
// Build (the tests do this on demand through internal/testkit/testwasm):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o guest.wasm ./reliability/testdata/guest
package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"

	"github.com/toolhost/toolhost/abi/guest"
)

type floodArgs struct {
	// N bytes go to stdout, in writes of Chunk bytes (default 64 KiB).
	N     int `json:"n"`
	Chunk int `json:"chunk,omitempty"`
}

type coinArgs struct {
	// Percent is the chance, 0 to 100, that the call fails transiently.
	Percent int `json:"percent"`
	// ID is echoed back, so the caller can match a response to its request.
	ID string `json:"id,omitempty"`
}

// escapeReport is what a guest could see of the host.
type escapeReport struct {
	Args     []string `json:"args"`
	Env      []string `json:"env"`
	Passwd   string   `json:"read_etc_passwd"`
	Root     string   `json:"list_root"`
	Cwd      string   `json:"getwd"`
	Write    string   `json:"write_tmp"`
	Hostname string   `json:"hostname"`
}

// outcome is "ok: what" or "error: why".
func outcome(what string, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok: " + what
}

func init() {
	guest.Register("guest.escape", guest.Options{Description: "tries to read files, list folders, write, and read its environment"},
		func(struct{}) (escapeReport, error) {
			var r escapeReport
			r.Args, r.Env = os.Args, os.Environ()
			b, err := os.ReadFile("/etc/passwd")
			r.Passwd = outcome(string(b), err)
			ents, err := os.ReadDir("/")
			r.Root = outcome(fmt.Sprint(len(ents), " entries"), err)
			wd, err := os.Getwd()
			r.Cwd = outcome(wd, err)
			r.Write = outcome("written", os.WriteFile("/tmp/toolhost-escape", []byte("x"), 0o644))
			h, err := os.Hostname()
			r.Hostname = outcome(h, err)
			return r, nil
		})
	guest.Register("guest.flood", guest.Options{Description: "writes n bytes to stdout in chunks, then returns n"},
		func(a floodArgs) (int, error) {
			chunk := a.Chunk
			if chunk <= 0 {
				chunk = 64 << 10
			}
			buf := make([]byte, chunk)
			for i := range buf {
				buf[i] = 'o'
			}
			for left := a.N; left > 0; left -= chunk {
				if _, err := os.Stdout.Write(buf[:min(chunk, left)]); err != nil {
					return 0, err
				}
			}
			return a.N, nil
		})
	guest.Register("guest.coin", guest.Options{Description: "fails transiently with the given chance; otherwise returns id",
		Idempotent: true},
		func(a coinArgs) (string, error) {
			n, err := rand.Int(rand.Reader, big.NewInt(100))
			if err != nil {
				return "", err
			}
			if int(n.Int64()) < a.Percent {
				return "", guest.Transient(errors.New("injected transient failure"))
			}
			return a.ID, nil
		})
}

func main() {}
