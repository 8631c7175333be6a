// Package proc starts and stops the server processes the benchmark
// harnesses measure, and reads their resident memory and CPU time.
package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Child is a server process under measurement.
type Child struct {
	Name string
	Cmd  *exec.Cmd
	URL  string // the MCP endpoint
	// Ready is how long the process took from start to its "serving MCP"
	// line: listening, with every module listed (or refused).
	Ready time.Duration
}

// StartToolhost runs `toolhost serve` with args and learns its URL from
// the "serving MCP" log line, which serve writes once every module is
// listed (with --lazy, the default, it listens earlier and compiles
// modules not in the describe cache in the background until then).
func StartToolhost(name, bin string, args []string) (*Child, error) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{Name: name, Cmd: cmd}
	urls := make(chan string, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent {
				log.WriteString(line + "\n")
				if i := strings.Index(line, `"url":"`); i >= 0 && strings.Contains(line, "serving MCP") {
					rest := line[i+len(`"url":"`):]
					urls <- rest[:strings.IndexByte(rest, '"')]
					sent = true
				}
			}
		}
		if !sent {
			close(urls)
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	select {
	case u, ok := <-urls:
		if !ok {
			_ = cmd.Wait()
			return nil, fmt.Errorf("toolhost %s exited before listening:\n%s", name, log.String())
		}
		c.URL, c.Ready = u, time.Since(start)
	case <-time.After(5 * time.Minute): // a cold compile on a loaded machine
		c.Stop()
		return nil, errors.New("toolhost " + name + " did not start")
	}
	return c, nil
}

// Stop ends the process (SIGTERM, then SIGKILL after a grace).
func (c *Child) Stop() {
	if c.Cmd.Process == nil || c.Cmd.ProcessState != nil {
		return
	}
	_ = c.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = c.Cmd.Process.Kill()
		<-done
	}
}

// RSS is the process's resident set size in bytes (VmRSS), read from
// /proc, so Linux only.
func (c *Child) RSS() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// clockTick is the unit of /proc/PID/stat's times: USER_HZ, 100 on every
// Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// CPU is the CPU time the process has used so far, user and system, from
// /proc (Linux only), in 10 ms ticks: read it before and after a run of
// several seconds.
func (c *Child) CPU() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name, in parentheses, may hold spaces; fields 14 and 15
	// (utime, stime) are the 12th and 13th after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name in /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
