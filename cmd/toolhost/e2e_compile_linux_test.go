//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nestedBlocks is a compile bomb: one function of n nested blocks, whose
// compile time grows with n² (100,000 took 2.5 minutes).
func nestedBlocks(n int) []byte {
	body := []byte{0}
	body = append(body, bytes.Repeat([]byte{0x02, 0x40}, n)...)
	body = append(body, bytes.Repeat([]byte{0x0b}, n+1)...)
	leb := func(v uint32) []byte {
		var b []byte
		for ; v >= 0x80; v >>= 7 {
			b = append(b, byte(v)|0x80)
		}
		return append(b, byte(v))
	}
	code := append([]byte{1}, leb(uint32(len(body)))...)
	code = append(code, body...)
	b := []byte("\x00asm\x01\x00\x00\x00")
	b = append(b, 1, 4, 1, 0x60, 0, 0, 3, 2, 1, 0, 10)
	b = append(b, leb(uint32(len(code)))...)
	return append(b, code...)
}

// Issue 10 finding 5: serve compiles start-up modules in a child process
// and honours SIGTERM while it does; before, it compiled in-process,
// ignoring the signal until the bomb had compiled (2.5 minutes).
func TestE2ESIGTERMDuringStartupCompile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bomb.wasm"), nestedBlocks(100000), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd := exec.Command(buildCLI(t), "serve", "--addr", "127.0.0.1:0", "--plugins", dir, "--cache-dir", t.TempDir())
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for the compiler child: serve is then compiling the bomb.
	// (Any of its threads may have started it.)
	tasks := fmt.Sprintf("/proc/%d/task/*/children", cmd.Process.Pid)
	deadline := time.After(2 * time.Minute) // a hang guard, not a speed check
	for hasChild := false; !hasChild; {
		files, _ := filepath.Glob(tasks)
		for _, f := range files {
			if b, _ := os.ReadFile(f); len(strings.TrimSpace(string(b))) > 0 {
				hasChild = true
			}
		}
		if hasChild {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("serve exited before compiling: %v\n%s", err, stderr.String())
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("serve never started a compiler process:\n%s", stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("serve after SIGTERM during start-up: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute): // a hang guard
		_ = cmd.Process.Kill()
		t.Fatalf("serve ignored SIGTERM while compiling:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "serving MCP") {
		t.Fatalf("serve went on to serve after SIGTERM:\n%s", stderr.String())
	}
}
