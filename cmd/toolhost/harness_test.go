package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

var (
	cliOnce sync.Once
	cliPath string
	cliErr  error
)

// buildCLI builds the toolhost binary once per test process.
func buildCLI(t testing.TB) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolhost-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliPath = filepath.Join(dir, "toolhost")
		cmd := exec.Command("go", "build", "-o", cliPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			cliErr = &buildError{out: string(out), err: err}
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// pluginsDir is a plugins folder with the example tools, the misbehaving
// test module and the hand-written WAT module.
func pluginsDir(t testing.TB) string {
	t.Helper()
	return testwasm.Dir(t,
		testwasm.Go(t, "./tools-src/text"),
		testwasm.Go(t, "./tools-src/mathtools"),
		testwasm.Go(t, "./host/testdata/misbehave"),
		testwasm.WAT(t, "host/testdata/wat/echo.wat"),
	)
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	written chan struct{} // closed (and replaced) by each Write
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	return s.b.Write(p)
}

// next returns a channel closed by the next Write.
func (s *syncBuffer) next() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return s.written
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is a `toolhost serve` child process on a free port.
type server struct {
	url    string
	cmd    *exec.Cmd
	stderr *syncBuffer
	logged chan struct{} // closed once all of stderr is in the buffer
}

// startServer runs serve on 127.0.0.1:0 and learns the port from its log.
func startServer(t testing.TB, plugins string, extra ...string) *server {
	t.Helper()
	return startServerEnv(t, nil, plugins, extra...)
}

// startServerEnv is startServer with extra environment variables.
func startServerEnv(t testing.TB, env []string, plugins string, extra ...string) *server {
	t.Helper()
	bin := buildCLI(t)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--plugins", plugins,
		"--cache-dir", testCache}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &server{cmd: cmd, stderr: &syncBuffer{}, logged: make(chan struct{})}
	urlCh := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if i := strings.Index(line, `"url":"`); i >= 0 && strings.Contains(line, "serving MCP") {
				rest := line[i+len(`"url":"`):]
				urlCh <- rest[:strings.IndexByte(rest, '"')]
			}
		}
		close(urlCh)
		close(s.logged)
	}()
	// A server that never starts listening is killed too: a test that
	// fails here must not leave it running.
	started := false
	t.Cleanup(func() {
		if !started && s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	select {
	case u, ok := <-urlCh:
		if !ok {
			t.Fatalf("serve exited before listening:\n%s", s.stderr.String())
		}
		s.url = u
	case <-time.After(5 * time.Minute): // compiling cold modules on a loaded 2-core machine
		t.Fatalf("serve did not start:\n%s", s.stderr.String())
	}
	started = true
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			<-s.logged
			t.Logf("serve's log:\n%s", s.stderr.String())
		}
	})
	return s
}

// stop sends SIGTERM and expects a clean exit.
func (s *server) stop(t testing.TB) {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	err := s.cmd.Wait()
	<-s.logged // the process is gone, so its stderr ends
	if err != nil {
		t.Errorf("serve did not exit cleanly: %v\n%s", err, s.stderr.String())
	}
}

// client connects the official SDK client over Streamable HTTP.
func (s *server) client(t testing.TB) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "test"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// cli runs the toolhost binary against the server and returns stdout,
// stderr and the exit code.
func (s *server) cli(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return s.cliEnv(t, nil, args...)
}

// cliEnv is cli with extra environment variables.
func (s *server) cliEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	return runBinary(t, append([]string{"TOOLHOST_URL=" + s.url}, env...), args...)
}

// runBinary runs the toolhost binary with extra environment variables and
// returns stdout, stderr and the exit code.
func runBinary(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(buildCLI(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

// toolWatch is an MCP client session that hears tools/list_changed, for
// tests that change the plugins folder under a running server.
type toolWatch struct {
	*mcp.ClientSession
	srv     *server
	changed chan struct{}
}

// watchTools connects a client that counts the server's
// tools/list_changed notifications.
func (s *server) watchTools(t testing.TB) *toolWatch {
	t.Helper()
	w := &toolWatch{srv: s, changed: make(chan struct{}, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-watch", Version: "test"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case w.changed <- struct{}{}:
			default: // a full buffer already says "changed"
			}
		},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: s.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	w.ClientSession = cs
	return w
}

// has reports whether tools/list holds the tool of this wire name.
func (w *toolWatch) has(t testing.TB, wire string) bool {
	t.Helper()
	res, err := w.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == wire {
			return true
		}
	}
	return false
}

// next waits for the next tools/list_changed, within a bound only a
// broken server reaches; after says what changed the folder.
func (w *toolWatch) next(t testing.TB, after string) {
	t.Helper()
	select {
	case <-w.changed:
	case <-time.After(2 * time.Minute):
		t.Fatalf("no tools/list_changed notification after %s; server log:\n%s", after, w.srv.stderr.String())
	}
}

// await waits until the tool is listed (listed) or is not (!listed):
// several notifications may arrive for one reload.
func (w *toolWatch) await(t testing.TB, wire string, listed bool, after string) {
	t.Helper()
	for w.has(t, wire) != listed {
		w.next(t, after)
	}
}
