// Command testsummary runs `go test -json` (its arguments are the go test
// command line, with -json added after "test"), prints what plain
// `go test` would — each package's closing ok/FAIL line, build errors, and
// the output of failed tests — and ends with a short list of the tests
// that skipped and why. It exits with go test's own exit code. `make test`
// runs it, so that a missing optional toolchain (node, clang, wabt,
// redis-server) is visible instead of a silent skip.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run starts the go test command in args, filters its JSON stream to out,
// and returns its exit code (2 when it could not be started).
func run(args []string, out, errOut io.Writer) int {
	if len(args) < 2 || args[1] != "test" {
		fmt.Fprintln(errOut, "usage: testsummary go test [flags] [packages]")
		return 2
	}
	argv := append([]string{args[1], "-json"}, args[2:]...)
	cmd := exec.Command(args[0], argv...)
	cmd.Stdin, cmd.Stderr = os.Stdin, errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(errOut, "testsummary:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(errOut, "testsummary:", err)
		return 2
	}
	f := newFilter(out)
	copyErr := f.read(stdout)
	err = cmd.Wait()
	f.summary()
	if copyErr != nil {
		fmt.Fprintln(errOut, "testsummary: reading go test's output:", copyErr)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(errOut, "testsummary:", err)
		return 2
	}
	return 0
}
