package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// lazyPlugins is a folder with a module that loads at once and one whose
// toolhost_describe never returns: with a cold cache, the start is not
// over (every module listed or refused) until the host's describe timeout
// (5 s) refuses it, which leaves the test that long to see the server
// listening meanwhile.
func lazyPlugins(t *testing.T) string {
	return testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"), testwasm.WAT(t, "host/testdata/wat/describeloop.wat"))
}

// With --lazy (the default) serve listens before the modules not in the
// describe cache are compiled and described: /healthz answers and /readyz
// says 503 "starting: …" meanwhile; once every module is listed or
// refused, the "serving MCP" line comes, /readyz says ready and every tool
// that loaded is listed.
func TestE2ELazyServeListensBeforeColdModules(t *testing.T) {
	cmd := exec.Command(buildCLI(t), "serve", "--addr", "127.0.0.1:0", "--plugins", lazyPlugins(t),
		"--cache-dir", t.TempDir(), "--watch=false")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var log strings.Builder
	next := func(want string) string {
		t.Helper()
		timeout := time.After(2 * time.Minute) // a hang guard, not a speed check
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("serve ended before %q:\n%s", want, log.String())
				}
				log.WriteString(l + "\n")
				if strings.Contains(l, want) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q:\n%s", want, log.String())
			}
		}
	}
	url := func(line string) string {
		var rec struct{ URL string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.URL == "" {
			t.Fatalf("no url in %q: %v", line, err)
		}
		return strings.TrimSuffix(rec.URL, "/mcp")
	}
	get := func(u string) (int, string) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, strings.TrimSpace(string(b))
	}
	base := url(next("listening; modules still compiling"))
	if code, _ := get(base + "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz while starting: %d", code)
	}
	if code, body := get(base + "/readyz"); code != http.StatusServiceUnavailable || !strings.HasPrefix(body, "starting: ") || !strings.Contains(body, " of 2 modules listed") {
		t.Fatalf("/readyz while starting: %d %q; want 503 starting", code, body)
	}
	if url(next("serving MCP")) != base {
		t.Fatal("serving MCP names another address")
	}
	if !strings.Contains(log.String(), "describeloop.wasm") || !strings.Contains(log.String(), "(2 of 2 modules listed)") {
		t.Fatalf("no progress lines for the modules compiled in the background:\n%s", log.String())
	}
	if code, body := get(base + "/readyz"); code != http.StatusOK || !strings.HasPrefix(body, "ready") {
		t.Fatalf("/readyz once listed: %d %q", code, body)
	}
	s := &server{url: base + "/mcp"}
	tools := listTools(t, s.client(t))
	if _, ok := tools["wat_echo"]; !ok || len(tools) != 2 { // wat.echo and toolhost.plan
		t.Fatalf("tools once listed: %v; want wat_echo and toolhost_plan", keys(tools))
	}
}

// serve --stdio answers initialize at once, and the client's first
// tools/list waits until every module present at start is listed or
// refused, so it is whole: with a cold cache this Go module (no embedded
// manifest) compiles for seconds in the background, and an early answer
// would list none of its tools. (--interpret would list it from its
// describe on the interpreter in a fraction of a second: off, so the wait
// is certain.)
func TestE2ELazyStdioWaitsForTheListing(t *testing.T) {
	plugins := testwasm.Dir(t, testwasm.Go(t, "./tools-src/text"))
	srv := startStdio(t, "--plugins", plugins, "--cache-dir", t.TempDir(), "--watch=false", "--interpret=false")
	send, recv := srv.send, srv.answer
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if line := recv(); !strings.Contains(line, `"text_count"`) {
		t.Fatalf("first tools/list: %s; want text_count, compiled in the background before initialize was answered\n%s", line, srv.stderr.String())
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
