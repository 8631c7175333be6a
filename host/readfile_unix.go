//go:build unix

package host

import (
	"os"
	"syscall"
)

// openNonblocking opens path for reading without blocking: opening a FIFO
// with no writer otherwise waits forever. O_NONBLOCK does nothing to a
// regular file's reads.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
