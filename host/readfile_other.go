//go:build !unix

package host

import "os"

// openNonblocking opens path for reading; systems without FIFOs in the
// Unix sense need no flag.
func openNonblocking(path string) (*os.File, error) { return os.Open(path) }
