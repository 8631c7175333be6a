package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// child is a server process under measurement.
type child struct {
	name string
	cmd  *exec.Cmd
	url  string
}

// startToolhost runs `toolhost serve` and learns its URL from the
// "serving MCP" log line.
func startToolhost(name, bin string, args []string) (*child, error) {
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd}
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
		c.url = u
	case <-time.After(5 * time.Minute): // a cold compile on a loaded machine
		c.stop()
		return nil, errors.New("toolhost " + name + " did not start")
	}
	return c, nil
}

// stop ends the process (SIGTERM, then SIGKILL after a grace).
func (c *child) stop() {
	if c.cmd.Process == nil || c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}
