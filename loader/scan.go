package loader

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolhost/toolhost/host"
)

// Backoff for rescans that could not read the folder: the first retry
// after RetryMin, doubling up to RetryMax, until a rescan reads everything.
const (
	RetryMin = 500 * time.Millisecond
	RetryMax = 30 * time.Second
)

// ScanError is a rescan that could not read the whole folder. The serving
// set is what it was for everything not read: a folder that could not be
// listed changes nothing, and a file that could not be read keeps its
// previous version (a read error is not a removal). Watch retries it with
// backoff.
type ScanError struct {
	Dir string
	// Listing is why the folder could not be listed; nil when it was.
	Listing error
	// Files are the files listed but not read, with why.
	Files map[string]error
}

func (e *ScanError) Error() string {
	if e.Listing != nil {
		return fmt.Sprintf("plugins folder %s: cannot list it (tools kept as they were): %v", e.Dir, e.Listing)
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(e.Files)) {
		parts = append(parts, fmt.Sprintf("%s: %v", p, e.Files[p]))
	}
	return fmt.Sprintf("plugins folder %s: cannot read %d files (each keeps its previous version): %s",
		e.Dir, len(e.Files), strings.Join(parts, "; "))
}

// Unwrap returns the listing error, or the file errors.
func (e *ScanError) Unwrap() []error {
	if e.Listing != nil {
		return []error{e.Listing}
	}
	var errs []error
	for _, err := range e.Files {
		errs = append(errs, err)
	}
	return errs
}

// folderFS is how a Live reads its folder; tests put faults in it.
type folderFS struct {
	readDir  func(string) ([]os.DirEntry, error)
	stat     func(string) (os.FileInfo, error)
	readFile func(string) ([]byte, error)
}

var osFS = folderFS{readDir: os.ReadDir, stat: os.Stat, readFile: host.ReadModuleFile}

// list returns the folder's *.wasm paths, sorted. Unlike filepath.Glob,
// which reads an unreadable folder as an empty one, it reports why the
// folder could not be read.
func (l *Live) list() ([]string, error) {
	entries, err := l.fs.readDir(l.dir)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".wasm") {
			paths = append(paths, filepath.Join(l.dir, e.Name()))
		}
	}
	sort.Strings(paths)
	return paths, nil
}

// notModule is the sha recorded as refused for a path that is not a module
// file (a FIFO, a device, a directory, an oversized file), so the next
// rescan neither reads it again nor repeats the complaint while its stat
// is unchanged.
func notModule(st stamp) string {
	return fmt.Sprintf("not-a-module:%d:%d", st.size, st.mtime.UnixNano())
}

// nextBackoff is the wait before the next retry of a failed rescan.
func nextBackoff(prev time.Duration) time.Duration {
	if prev <= 0 {
		return RetryMin
	}
	return min(2*prev, RetryMax)
}

// errIsNotModule reports whether err says the path is not a module file.
func errIsNotModule(err error) bool { return errors.Is(err, host.ErrNotModuleFile) }
