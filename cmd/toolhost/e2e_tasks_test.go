package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
)

// `toolhost call --task` runs a call as an MCP task against a real server
// and ends as `call` does: the result on stdout and exit 0, or the
// envelope (the last line on stderr, after the progress lines) and exit 1.
func TestCLICallTask(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	out, errOut, code := srv.cli(t, "call", "--task", "text.count", `{"text":"a b c"}`)
	if code != 0 || !strings.Contains(out, `"words":3`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "task task-") || !strings.Contains(errOut, ": completed") {
		t.Fatalf("stderr %q, want progress lines ending completed", errOut)
	}
	for _, tc := range []struct {
		args []string
		kind dispatcher.Kind
	}{
		{[]string{"call", "--task", "--timeout", "150ms", "sleep", `{"ms":60000}`}, dispatcher.KindTimeout},
		{[]string{"call", "--task", "nope"}, dispatcher.KindNotFound},
	} {
		out, errOut, code := srv.cli(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		var de dispatcher.DispatchError
		if code != 1 || out != "" || json.Unmarshal([]byte(lines[len(lines)-1]), &de) != nil || de.Kind != tc.kind {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q; want the %s envelope last on stderr", tc.args, code, out, errOut, tc.kind)
		}
	}
}

// Ctrl-C on `toolhost call --task` cancels the task: the guest stops (the
// server's audit line says cancelled) and the CLI exits 1 with an envelope
// saying the task was cancelled.
func TestCLICallTaskInterrupt(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	cmd := exec.Command(buildCLI(t), "call", "--task", "sleep", `{"ms":60000}`)
	cmd.Env = append(os.Environ(), "TOOLHOST_URL="+srv.url)
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLog(t, stderr, "task task-", ": working", 1)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want 1; stderr %q", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	var de dispatcher.DispatchError
	if json.Unmarshal([]byte(lines[len(lines)-1]), &de) != nil || !strings.Contains(de.Message, "was cancelled") || stdout.Len() != 0 {
		t.Fatalf("stdout %q, stderr %q; want the envelope saying the task was cancelled", stdout.String(), stderr.String())
	}
	waitForLog(t, srv.stderr, `"tool":"sleep"`, `"outcome":"cancelled"`, 1)
}

// A real guest's progress reaches a client that follows its call as a
// task: math.primes (a Go SDK guest calling guest.Progress) run with
// `call --task` ends with its last note in the task's statusMessage, which
// the CLI's progress lines show.
func TestCLICallTaskShowsGuestProgress(t *testing.T) {
	srv := startServer(t, pluginsDir(t))
	out, errOut, code := srv.cli(t, "call", "--task", "math.primes", `{"below":1000000}`)
	if code != 0 || !strings.Contains(out, `"count":78498`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, ": completed: The call completed. The tool's last note: 78498 primes below 1000000") {
		t.Fatalf("stderr %q, want the completed line with the guest's last progress note", errOut)
	}
}
