// Package redistest runs a real redis-server for tests: on a free loopback
// port, in a temporary folder, without persistence, stopped when the test
// ends. Tests that need Redis call Start; it skips the test with a clear
// message when redis-server is not installed, unless the environment
// variable CI is set, where a missing server fails the test instead.
package redistest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one redis-server process. Its methods are safe for concurrent
// use.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int

	durable bool // appendonly with fsync on every write: data outlives a kill

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts a redis-server for t and stops it at t's cleanup. It keeps
// nothing on disk: a Restart after Stop starts empty.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

// StartDurable is Start for a server that keeps its data across Stop and
// Restart, as a production Redis with an append-only file does
// (appendfsync always: every acknowledged write survives even the kill).
func StartDurable(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

func start(t testing.TB, durable bool) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server not found (CI is set, so this test must run): %v", err)
		}
		t.Skip("redis-server not installed (apt-get install redis-server); skipping a test that needs a real Redis")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: freePort(t), durable: durable}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Addr is the server's host:port.
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Stop kills the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts the server (again) on the same port and waits until it
// accepts commands. Its data is gone unless it was started durable.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	persist := []string{"--appendonly", "no"}
	if s.durable {
		persist = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	args := append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--protected-mode", "yes", "--loglevel", "warning"}, persist...)
	cmd := exec.Command(s.bin, args...)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	go func() { // keep the pipe drained; the log is only read on failure
		sc := bufio.NewScanner(out)
		for sc.Scan() {
		}
	}()
	if err := waitReady(s.Addr(), 10*time.Second); err != nil {
		s.t.Fatalf("redis-server on %s did not come up: %v", s.Addr(), err)
	}
}

// waitReady polls PING until the server answers PONG, within bound.
func waitReady(addr string, bound time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		if last = ping(ctx, addr); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond): // a poll interval, not a wait for an event
		}
	}
	return fmt.Errorf("%v (last error: %v)", ctx.Err(), last)
}

func ping(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
