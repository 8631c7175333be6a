//go:build linux

package host_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
)

// Issue 27 item 4: the compiler child parses untrusted module bytes, yet
// it inherited the server's whole environment (grant secrets from
// {env = …}, the OAuth client secret, the Redis password, OTEL headers).
// A real child, compiling a module slow enough to be caught at it, is
// read from /proc: it has its own parameters and the Go runtime's
// settings, and not the secret in its parent's environment.
func TestCompileChildEnvironmentHoldsNoSecrets(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	t.Setenv("TOOLHOST_TEST_GRANT_SECRET", secret)
	t.Setenv("GOGC", "150") // a Go runtime setting: the child keeps it
	rt := childRuntime(t, host.CompileLimits{})
	ctx, cancel := context.WithCancel(context.Background())
	loaded := make(chan error, 1)
	go func() {
		_, err := rt.Load(ctx, "blocks.wasm", nestedBlocks(100000)) // minutes of compiling
		loaded <- err
	}()
	defer func() { cancel(); <-loaded }()
	env, ok := childEnviron(t, loaded)
	if !ok {
		t.Fatal("no compiler child was seen before the load ended")
	}
	vars := map[string]string{}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			vars[k] = v
		}
	}
	if bytes.Contains(env, []byte(secret)) {
		t.Errorf("the compiler child sees the parent's secret: %q", vars)
	}
	if vars["GOGC"] != "150" || vars["TOOLHOST_COMPILE_CACHE"] == "" {
		t.Errorf("the compiler child's environment lacks what it needs: %q", vars)
	}
	for k := range vars {
		if !strings.HasPrefix(k, "TOOLHOST_COMPILE_") && !strings.HasPrefix(k, "GO") {
			t.Errorf("the compiler child has %s; want only its parameters and the Go runtime's settings", k)
		}
	}
}

// childEnviron waits for a child of this process that is a compiler child
// (after its exec: its environment names host.CompileChildEnv) and returns
// its /proc environ, or false once the load ends without one.
func childEnviron(t *testing.T, loaded <-chan error) ([]byte, bool) {
	t.Helper()
	self := strconv.Itoa(os.Getpid())
	mark := []byte(host.CompileChildEnv + "=1\x00")
	deadline := time.After(2 * time.Minute)  // a loaded machine; found within milliseconds otherwise
	poll := time.NewTicker(time.Millisecond) // /proc has nothing to wait on
	defer poll.Stop()
	for {
		stats, _ := filepath.Glob("/proc/[0-9]*/stat")
		for _, stat := range stats {
			b, err := os.ReadFile(stat)
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...: comm may hold spaces, so read
			// after its closing parenthesis.
			fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if len(fields) < 2 || fields[1] != self {
				continue
			}
			env, err := os.ReadFile(filepath.Join(filepath.Dir(stat), "environ"))
			if err == nil && bytes.Contains(env, mark) {
				return env, true
			}
		}
		select {
		case err := <-loaded:
			t.Logf("load ended: %v", err)
			return nil, false
		case <-deadline:
			return nil, false
		case <-poll.C:
		}
	}
}
