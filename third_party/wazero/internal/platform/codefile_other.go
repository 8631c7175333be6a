//go:build !linux

package platform

import (
	"errors"
	"os"
)

// MapsCodeFiles reports whether MapCodeFile can map code here: not on
// this platform (macOS refuses unsigned executable file pages; the others
// are untested), so the code is copied into MmapCodeSegment instead.
const MapsCodeFiles = false

// MapCodeFile is not supported on this platform; see MapsCodeFiles.
func MapCodeFile(f *os.File, offset int64, size int) ([]byte, error) {
	return nil, errors.New("mapping code from a file is not supported on this platform")
}

// ReleaseCodePages does nothing here: MapCodeFile maps nothing.
func ReleaseCodePages(b []byte) error { return nil }
