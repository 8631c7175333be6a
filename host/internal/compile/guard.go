package compile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Guard keeps wazero's file compilation cache from taking the host
// down or refusing good modules (issue 10 finding 13). wazero trusts its
// cache files: it sizes slices from the counts in an entry before reading
// them, so a changed function count in one header made every restart die
// with "fatal error: out of memory", and a flipped byte or a truncated
// entry fails CompileModule for good, since wazero neither deletes nor
// recompiles it. So the guard checks every entry's structure before
// wazero may read it (counts against the bytes that hold them, offsets
// inside the code), deletes the entries that fail, and on a compile error
// that came from the cache checks every entry's code checksum too, so the
// retry compiles afresh.
//
// The layout checked is the fork's of wazero v1.12 (internal/engine/wazevo/
// engine_cache.go: serializeCompiledModule, code page-aligned); TestCacheGuardAcceptsWazeroEntries
// fails if an upgrade changes it. A Guard is safe for concurrent use.
type Guard struct {
	root   string // the cache folder; wazero's entries are in root/wazero-*/
	logger *slog.Logger

	mu   sync.Mutex
	seen map[string]fileStamp // entries checked, as they were when checked
}

type fileStamp struct {
	size  int64
	mtime int64
}

var cacheCRC = crc32.MakeTable(crc32.Castagnoli)

// cacheMagic starts every wazero cache entry.
const cacheMagic = "WAZEVO"

// cacheCodeAlign is the alignment of an entry's code in the file, so that
// wazero can map it from the file (the fork's platform.CodeFileAlign).
const cacheCodeAlign = 64 << 10

// NewGuard returns the guard of the cache in root, having swept it once.
func NewGuard(root string, logger *slog.Logger) *Guard {
	g := &Guard{root: root, logger: logger, seen: map[string]fileStamp{}}
	g.Sweep(false)
	return g
}

// Sweep checks the entries not checked since they last changed (every
// entry, with their code checksums, when full) and deletes those that are
// damaged. It returns how many it deleted.
func (g *Guard) Sweep(full bool) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	dirs, _ := filepath.Glob(filepath.Join(g.root, "wazero-*"))
	removed := 0
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !isEntryName(e.Name()) {
				continue // a temporary file wazero is writing, or not wazero's
			}
			p := filepath.Join(dir, e.Name())
			fi, err := os.Stat(p)
			if err != nil {
				continue
			}
			st := fileStamp{fi.Size(), fi.ModTime().UnixNano()}
			if !full && g.seen[p] == st {
				continue
			}
			if err := checkCacheEntry(p, full); err != nil {
				if rmErr := os.Remove(p); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
					g.logger.Warn("compilation cache: cannot delete a damaged entry; wazero may refuse the module it holds",
						"file", p, "damage", err, "err", rmErr)
					continue
				}
				g.logger.Warn("compilation cache: deleted a damaged entry; its module will be compiled again", "file", p, "damage", err)
				delete(g.seen, p)
				removed++
				continue
			}
			g.seen[p] = st
		}
	}
	return removed
}

// Entries counts the finished entries in the cache.
func (g *Guard) Entries() int {
	n := 0
	_ = filepath.WalkDir(g.root, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && isEntryName(d.Name()) {
			n++
		}
		return nil
	})
	return n
}

// isEntryName reports whether name is a finished wazero cache entry: the
// hex of a 32-byte key. Entries being written end in .tmp.
func isEntryName(name string) bool {
	if len(name) != 64 {
		return false
	}
	return strings.Trim(name, "0123456789abcdef") == ""
}

// checkCacheEntry reads one entry's structure and, when full, its code
// checksum. Every count is checked against the bytes left to hold it, the
// way wazero would need them.
func checkCacheEntry(path string, full bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	r := &entryReader{f: f, size: fi.Size()}
	head := r.bytes(len(cacheMagic) + 1)
	if r.err != nil || string(head[:len(cacheMagic)]) != cacheMagic {
		return errors.New("no wazero header")
	}
	r.bytes(int(head[len(cacheMagic)])) // the wazero version
	n := r.u32()
	if !r.fits(uint64(n), 8) {
		return fmt.Errorf("declares %d functions, more than its %d bytes can hold", n, fi.Size())
	}
	offsets := r.bytes(int(n) * 8)
	codeLen := r.u64()
	if !r.fits(codeLen, 1) {
		return fmt.Errorf("declares %d bytes of code, more than it holds", codeLen)
	}
	for i := range int(n) {
		if off := binary.LittleEndian.Uint64(offsets[8*i:]); off >= codeLen {
			return fmt.Errorf("function %d starts at %d, past the code's %d bytes", i, off, codeLen)
		}
	}
	// The code starts at the next cacheCodeAlign offset, so that wazero can map it.
	r.skip((cacheCodeAlign-r.off%cacheCodeAlign)%cacheCodeAlign, nil)
	if codeLen > 0 {
		var sum hash.Hash32
		if full {
			sum = crc32.New(cacheCRC)
			r.skip(int64(codeLen), sum)
		} else {
			r.skip(int64(codeLen), nil)
		}
		if want := r.u32(); full && r.err == nil && sum.Sum32() != want {
			return errors.New("code checksum mismatch")
		}
	}
	switch r.byte() {
	case 0:
	case 1:
		if m := r.u64(); !r.fits(m, 16) {
			return fmt.Errorf("declares %d source map entries, more than it holds", m)
		}
		return r.err // the rest is read without allocating by count
	default:
		return errors.New("bad source map flag")
	}
	if r.err != nil {
		return r.err
	}
	if r.left() < 4 {
		return nil // an older entry without a catch table: wazero deletes it as stale
	}
	tables := r.u32()
	if !r.fits(uint64(tables), 4) {
		return fmt.Errorf("declares %d catch tables, more than it holds", tables)
	}
	for range tables {
		if c := r.u32(); !r.fits(uint64(c), 5) {
			return fmt.Errorf("declares %d catch clauses, more than it holds", c)
		} else {
			r.skip(int64(c)*5, nil)
		}
	}
	return r.err
}

// entryReader reads little-endian fields at an offset, remembering the
// first error; skipping code costs no read.
type entryReader struct {
	f         *os.File
	off, size int64
	err       error
}

func (r *entryReader) left() int64 { return r.size - r.off }

func (r *entryReader) bytes(n int) []byte {
	b := make([]byte, n)
	r.read(b)
	return b
}

func (r *entryReader) read(b []byte) {
	if r.err != nil {
		return
	}
	if _, err := r.f.ReadAt(b, r.off); err != nil {
		r.err = fmt.Errorf("truncated: %w", err)
		return
	}
	r.off += int64(len(b))
}

func (r *entryReader) byte() byte {
	var b [1]byte
	r.read(b[:])
	return b[0]
}

func (r *entryReader) u32() uint32 {
	var b [4]byte
	r.read(b[:])
	return binary.LittleEndian.Uint32(b[:])
}

func (r *entryReader) u64() uint64 {
	var b [8]byte
	r.read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// fits reports whether n items of size bytes each fit in what is left.
func (r *entryReader) fits(n uint64, size uint64) bool {
	return r.err == nil && r.left() >= 0 && n <= uint64(r.left())/size
}

// skip passes over n bytes, feeding them to w if it is not nil.
func (r *entryReader) skip(n int64, w io.Writer) {
	if r.err != nil {
		return
	}
	if n > r.left() {
		r.err = errors.New("truncated")
		return
	}
	if w != nil {
		if _, err := io.Copy(w, io.NewSectionReader(r.f, r.off, n)); err != nil {
			r.err = err
			return
		}
	}
	r.off += n
}

// IsCacheError reports whether a CompileModule error came from the file
// cache rather than the module: wazero's deserialiser prefixes its errors
// with "compilationcache:", and the cache's reads and writes fail with
// file system errors, which compiling a module never produces.
func IsCacheError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	var errno syscall.Errno
	return strings.HasPrefix(err.Error(), "compilationcache:") ||
		errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &errno)
}
