package redistest

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the server die with the test binary, so that a test
// that panics or times out (skipping its cleanup) leaves no redis-server
// behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
