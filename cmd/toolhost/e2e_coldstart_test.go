package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/internal/wasmcheck"
	toolserver "github.com/toolhost/toolhost/server"
	"github.com/toolhost/toolhost/transport"
)

// embedded copies each module into a folder of the test's and embeds its
// manifest there with `toolhost manifest embed`, as make plugins does;
// it returns the copies' paths.
func embedded(t *testing.T, wasm ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, w := range wasm {
		b, err := os.ReadFile(w)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(w))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	args := append([]string{"manifest", "embed", "--cache-dir", t.TempDir()}, out...)
	if stdout, stderr, code := runBinary(t, nil, args...); code != 0 {
		t.Fatalf("manifest embed: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, p := range out {
		b, _ := os.ReadFile(p)
		if _, ok, err := wasmcheck.CustomSection(b, abi.ManifestSection); !ok || err != nil {
			t.Fatalf("%s has no %s section after embed: %v", p, abi.ManifestSection, err)
		}
	}
	return out
}

// serveLines starts serve with args and returns a func that waits for the
// next stderr line containing want (a hang guard of minutes, not a speed
// check) and the log so far.
func serveLines(t *testing.T, args ...string) (next func(want string) string, log *syncBuffer) {
	t.Helper()
	cmd := exec.Command(buildCLI(t), args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	log = &syncBuffer{}
	return func(want string) string {
		t.Helper()
		timeout := time.After(3 * time.Minute)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("serve ended before %q:\n%s", want, log.String())
				}
				log.Write([]byte(l + "\n"))
				if strings.Contains(l, want) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q:\n%s", want, log.String())
			}
		}
	}, log
}

func lineURL(t *testing.T, line string) string {
	t.Helper()
	var rec struct{ URL string }
	if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.URL == "" {
		t.Fatalf("no url in %q: %v", line, err)
	}
	return rec.URL
}

// A cold start (empty compilation and describe caches) over HTTP: the
// first tools/list, at either revision, is the whole folder, although one
// module (describeloop, whose describe never returns) is still being
// refused and the Go module has not compiled; a call at once succeeds
// (it waits for the compile under its own deadline). The module with an
// embedded manifest is listed from it, so only the others are waited for.
func TestE2EColdStartHTTPFirstListComplete(t *testing.T) {
	plugins := testwasm.Dir(t, append(embedded(t, testwasm.Go(t, "./tools-src/text")),
		testwasm.WAT(t, "host/testdata/wat/echo.wat"), testwasm.WAT(t, "host/testdata/wat/describeloop.wat"))...)
	next, log := serveLines(t, "serve", "--addr", "127.0.0.1:0", "--plugins", plugins, "--cache-dir", t.TempDir(), "--watch=false")
	s := &server{url: lineURL(t, next("listening; modules still compiling"))}
	for _, rev := range []string{transport.Revision20251125, transport.Revision20260728} {
		cs := s.clientAt(t, rev)
		list, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", rev, err)
		}
		names := map[string]bool{}
		for _, tl := range list.Tools {
			names[tl.Name] = true
		}
		for _, want := range []string{"text_count", "text_find", "text_case", "text_slug", "wat_echo", "toolhost_plan"} {
			if !names[want] {
				t.Fatalf("%s: first tools/list %v lacks %s\n%s", rev, keys(names), want, log.String())
			}
		}
		if len(names) != 6 {
			t.Fatalf("%s: first tools/list %v; want the 6 tools of the modules that load", rev, keys(names))
		}
		res := callTool(t, cs, "text_count", map[string]any{"text": "a b c"}, nil)
		got, _ := json.Marshal(res.StructuredContent)
		if res.IsError || !strings.Contains(string(got), `"words":3`) {
			t.Fatalf("%s: text_count at once: %s %+v\n%s", rev, got, res, log.String())
		}
	}
}

// A cold start over stdio: initialize is answered, the first tools/list
// is the whole folder and a call at once succeeds.
func TestE2EColdStartStdio(t *testing.T) {
	plugins := testwasm.Dir(t, append(embedded(t, testwasm.Go(t, "./tools-src/text")), testwasm.WAT(t, "host/testdata/wat/echo.wat"))...)
	srv := startStdio(t, "--plugins", plugins, "--cache-dir", t.TempDir(), "--watch=false")
	srv.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	if line := srv.answer(); !strings.Contains(line, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", line)
	}
	srv.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	srv.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	line := srv.answer()
	for _, want := range []string{`"text_count"`, `"text_slug"`, `"wat_echo"`} {
		if !strings.Contains(line, want) {
			t.Fatalf("first tools/list lacks %s: %s\n%s", want, line, srv.stderr.String())
		}
	}
	srv.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"text_count","arguments":{"text":"a b c"}}}`)
	line = srv.answer()
	if !strings.Contains(line, `\"words\":3`) || strings.Contains(line, `"isError":true`) {
		t.Fatalf("text_count at once: %s\n%s", line, srv.stderr.String())
	}
}

// status fetches GET /status as `toolhost status --json` prints it.
func status(t *testing.T, s *server) toolserver.StatusReport {
	t.Helper()
	out, errOut, code := s.cli(t, "status", "--json")
	if code != 0 {
		t.Fatalf("status: exit %d: %s", code, errOut)
	}
	var r toolserver.StatusReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return r
}

func stateOf(r toolserver.StatusReport, file string) (string, string) {
	for _, m := range r.Modules {
		if filepath.Base(m.Path) == file {
			return m.State, m.Reason
		}
	}
	return "", ""
}

// pollStatus asks /status until ok holds (a generous deadline: compiles
// on a loaded machine), and returns the report that satisfied it.
func pollStatus(t *testing.T, s *server, what string, ok func(toolserver.StatusReport) bool) toolserver.StatusReport {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := status(t, s)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never; last status %+v\n%s", what, r, s.stderr.String())
		}
		select {
		case <-s.stderr.next(): // something happened: look again
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A module dropped into a running server with its manifest embedded is
// listed without waiting for its compile and a call at once is answered;
// a module whose section lies (it claims mathtools' tools) is listed, then
// refused once it compiles, with the reason in status, list and readyz;
// a file that is not a module is refused from the start.
func TestE2EDroppedInAndRefusedModules(t *testing.T) {
	emb := embedded(t, testwasm.Go(t, "./tools-src/text"), testwasm.Go(t, "./tools-src/mathtools"))
	dir := testwasm.Dir(t, testwasm.WAT(t, "host/testdata/wat/echo.wat"))
	if err := os.WriteFile(filepath.Join(dir, "junk.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--cache-dir", t.TempDir())
	r := status(t, s)
	if st, reason := stateOf(r, "junk.wasm"); st != "refused" || !strings.Contains(reason, "not a valid WebAssembly module") {
		t.Fatalf("junk.wasm: %q %q; want refused, with inspect's reason", st, reason)
	}
	if st, _ := stateOf(r, "echo.wasm"); st != "serving" {
		t.Fatalf("echo.wasm: %q", st)
	}
	if r.Version == "" || len(r.Transports) != 1 || !strings.HasPrefix(r.Transports[0], "streamable-http http://127.0.0.1:") || r.Cache.Dir == "" {
		t.Fatalf("status: %+v", r)
	}

	// Dropped in, through a rename as a deployment does.
	place := func(src, name string, wasm []byte) {
		t.Helper()
		if wasm == nil {
			var err error
			if wasm, err = os.ReadFile(src); err != nil {
				t.Fatal(err)
			}
		}
		tmp := filepath.Join(dir, ".tmp-"+name)
		if err := os.WriteFile(tmp, wasm, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	place(emb[0], "text.wasm", nil)
	pollStatus(t, s, "text.wasm listed", func(r toolserver.StatusReport) bool { st, _ := stateOf(r, "text.wasm"); return st == "serving" })
	cs := s.client(t)
	res := callTool(t, cs, "text_count", map[string]any{"text": "a b"}, nil)
	if got, _ := json.Marshal(res.StructuredContent); res.IsError || !strings.Contains(string(got), `"words":2`) {
		t.Fatalf("text_count on the dropped-in module: %s %+v", got, res)
	}

	// A liar: text's code with mathtools' section.
	textBytes, _ := os.ReadFile(emb[0])
	mathBytes, _ := os.ReadFile(emb[1])
	section, _, _ := wasmcheck.CustomSection(mathBytes, abi.ManifestSection)
	liar, err := wasmcheck.WithCustomSection(textBytes, abi.ManifestSection, section)
	if err != nil {
		t.Fatal(err)
	}
	place("", "liar.wasm", liar)
	r = pollStatus(t, s, "liar.wasm refused", func(r toolserver.StatusReport) bool { st, _ := stateOf(r, "liar.wasm"); return st == "refused" })
	if _, reason := stateOf(r, "liar.wasm"); !strings.Contains(reason, abi.ManifestSection+" section does not match") {
		t.Fatalf("liar.wasm's reason: %q", reason)
	}
	if _, ok := listTools(t, cs)["math_eval"]; ok {
		t.Fatal("the liar's claimed tools are still listed after its refusal")
	}
	out, _, code := s.cli(t, "list")
	if code != 0 || !strings.Contains(out, "liar.wasm") || !strings.Contains(out, "refused") || !strings.Contains(out, "junk.wasm") {
		t.Fatalf("toolhost list does not show the refused files:\n%s", out)
	}
	res2, err := http.Get(strings.TrimSuffix(s.url, "/mcp") + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res2.Body)
	res2.Body.Close()
	for _, want := range []string{"liar.wasm: refused", "junk.wasm: refused", "text.wasm: serving", "echo.wasm: serving"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("/readyz lacks %q:\n%s", want, body)
		}
	}
}
