package host

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxModuleBytes caps the size of a module file. The largest Go guests are
// tens of megabytes; a larger file is refused before it is read, so a
// symlink to /dev/zero or a runaway file cannot exhaust the host's memory.
const MaxModuleBytes = 128 << 20

// ErrNotModuleFile marks a module path that is not a regular file of a
// readable size (a FIFO, a device, a directory, or over MaxModuleBytes):
// the file itself is wrong, and reading it again will not help. Other read
// errors (out of file descriptors, EIO) are worth retrying.
var ErrNotModuleFile = errors.New("not a module file")

// ReadModuleFile reads a module file: a regular file, after symlinks are
// resolved, of at most MaxModuleBytes. It never blocks on a FIFO: the
// file is opened non-blocking and its type checked on the open descriptor,
// so a file swapped for a FIFO between a stat and the open cannot stall the
// caller either. An error wraps ErrNotModuleFile when the path is not a
// module file at all.
func ReadModuleFile(path string) ([]byte, error) {
	f, err := openNonblocking(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s, not a regular file", ErrNotModuleFile, path, fileKind(fi.Mode()))
	}
	if fi.Size() > MaxModuleBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrNotModuleFile, path, fi.Size(), MaxModuleBytes)
	}
	// The size can change under us: read at most one byte past the limit.
	// Sized from the stat, the buffer is read into once; io.ReadAll grew
	// it from 512 bytes, copying a Go guest's megabytes a dozen times
	// (several ms per module, on the path of every start).
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, MaxModuleBytes+1)); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if len(b) > MaxModuleBytes {
		return nil, fmt.Errorf("%w: %s grew past the %d-byte limit while it was read", ErrNotModuleFile, path, MaxModuleBytes)
	}
	return b, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
