package platform

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// MapsCodeFiles reports whether MapCodeFile can map code here.
const MapsCodeFiles = true

// MapCodeFile maps size bytes of f at offset as read-only executable
// code, private to this process. Unlike MmapCodeSegment and a copy, a
// page of it is resident only once executed, and then as a clean page of
// the file that the kernel may drop and read again under pressure: an
// idle module's code costs no memory of its own. offset must be a multiple
// of the page size.
//
// The mapping reads the file as it is at each first touch of a page, so
// the file must not be written or truncated in place while mapped (a
// page past a truncated end faults with SIGBUS); replacing it by rename,
// as the file cache does, leaves the mapped file unchanged.
func MapCodeFile(f *os.File, offset int64, size int) ([]byte, error) {
	if size <= 0 || offset%int64(os.Getpagesize()) != 0 {
		return nil, fmt.Errorf("code of %d bytes at offset %d cannot be mapped with %d-byte pages", size, offset, os.Getpagesize())
	}
	return unix.Mmap(int(f.Fd()), offset, size, unix.PROT_READ|unix.PROT_EXEC, unix.MAP_PRIVATE)
}

// ReleaseCodePages lets the pages of code that MapCodeFile mapped leave
// the process's memory: they stay in the page cache, and the next run of
// each is a minor fault that maps it again from the file. A page is
// mapped whole folios at a time (on ext4 with large folios, one guest's
// first run maps nearly all of its code), so without this a module that
// ran once keeps all its code resident. Only for MapCodeFile's mappings:
// on an anonymous one, MADV_DONTNEED would zero the code.
func ReleaseCodePages(b []byte) error {
	return unix.Madvise(b, unix.MADV_DONTNEED)
}
