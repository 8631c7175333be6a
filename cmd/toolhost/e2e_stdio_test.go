package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// TestE2EStdioMalformedInput feeds `serve --stdio` every kind of line that
// used to end the process (exit 2) and wants, for each, the JSON-RPC error
// the spec names and then a valid request answered. Only EOF ends it.
func TestE2EStdioMalformedInput(t *testing.T) {
	srv := startStdio(t, "--plugins", pluginsDir(t), "--max-body", "4096")
	send := srv.send
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	// recv skips the server's notifications: with --stdio answering
	// initialize at once, a module still compiling then is listed later,
	// with notifications/tools/list_changed between two answers.
	recv := func() answer {
		t.Helper()
		for {
			line := srv.recv()
			var a answer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			if a.Method == "" {
				return a
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`)
	if a := recv(); a.Error != nil {
		t.Fatalf("initialize: %+v", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	cases := []struct {
		line string
		code int
		id   string
	}{
		{`not json at all`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/li`, -32700, "null"},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":2.5,"method":"ping"}`, -32600, "null"},
		{`42`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":"long","method":"ping","params":{"pad":"` + strings.Repeat("x", 10000) + `"}}`, -32600, "null"},
	}
	for i, tc := range cases {
		send(tc.line)
		if a := recv(); a.Error == nil || a.Error.Code != tc.code || string(a.ID) != tc.id {
			t.Errorf("%.60s: got id %s, error %+v; want code %d, id %s", tc.line, a.ID, a.Error, tc.code, tc.id)
		}
		id := `"after-` + string(rune('a'+i)) + `"`
		send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"still here"}}}`)
		if a := recv(); string(a.ID) != id || a.Error != nil || !strings.Contains(string(a.Result), "still here") {
			t.Fatalf("after %.60s: got %s %s %+v", tc.line, a.ID, a.Result, a.Error)
		}
	}
	srv.stdin.Close()
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("at EOF: %v\n%s", err, srv.stderr.String())
	}
}

// stdioServer is `toolhost serve --stdio` run as a process: requests are
// written to its stdin a line each, answers read from its stdout, and its
// stderr is kept for failure messages.
type stdioServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr syncBuffer
}

// startStdio starts `toolhost serve --stdio ARGS...`; the process gets EOF
// and is waited for when the test ends, unless the test did that itself.
func startStdio(t *testing.T, args ...string) *stdioServer {
	t.Helper()
	s := &stdioServer{t: t, cmd: exec.Command(buildCLI(t), append([]string{"serve", "--stdio"}, args...)...)}
	stdin, err := s.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.stdin, s.out = stdin, bufio.NewReader(stdout)
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stdin.Close(); _ = s.cmd.Wait() })
	return s
}

// send writes one line to the server.
func (s *stdioServer) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("write %.60q: %v\n%s", line, err, s.stderr.String())
	}
}

// recv reads one line from the server.
func (s *stdioServer) recv() string {
	s.t.Helper()
	line, err := s.out.ReadString('\n')
	if err != nil {
		s.t.Fatalf("read: %v; the server ended:\n%s", err, s.stderr.String())
	}
	return line
}

// answer is the next line that is not a notification: a server that
// answers initialize before every module is listed sends
// notifications/tools/list_changed whenever one is, between any two
// answers.
func (s *stdioServer) answer() string {
	s.t.Helper()
	for {
		if line := s.recv(); !strings.Contains(line, `"method":"notifications/`) {
			return line
		}
	}
}
