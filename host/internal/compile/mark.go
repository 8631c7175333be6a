package compile

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// compileMarkDir is the folder, inside the cache folder, of the marks the
// compiler child leaves (see Child.mark); its version names what a mark
// means, and a host that means something else by one bumps it.
const compileMarkDir = "compiled-v1"

// mark is the path of the mark saying that a compiler child, the
// same executable under the same limits, compiled the module whose bytes
// have the sha256 sum (as read from its file: the bytes the child gets
// follow from them and the executable) within those limits; "" when there
// is no file cache or no child. With a mark, a later load (a restart, a
// warm-up, a compile on demand after the code was released) skips the
// child and loads from the file cache: the child's start and its decode
// and validation of the whole module again were about two thirds of a
// warm start's time (docs/BENCHMARKS.md, "Memory per idle module"). Were
// wazero's entry gone, the runtime would compile the module in this
// process, which is safe for these bytes: compiling is deterministic, and
// the same compiler compiled them within the limits before.
func (c *Child) mark(sum [sha256.Size]byte) string {
	if c.id == "" || c.cacheDir == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", c.id)
	h.Write(sum[:])
	return filepath.Join(c.cacheDir, compileMarkDir, hex.EncodeToString(h.Sum(nil))+".ok")
}

// markCompiled records a child's successful compile; a mark that cannot
// be written only costs the next load the child again.
func markCompiled(path string) {
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, nil, 0o644); err == nil {
		_ = os.Rename(tmp, path)
	}
}

// compiled reports whether the mark at path is there.
func compiled(path string) bool {
	if path == "" {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// identity names the compiler child and its limits (defaults applied) for
// the marks: the executable (path, size and modification time: a rebuilt
// or upgraded toolhost compiles differently), its arguments, and the CPU
// and memory bounds. "" when there is no child, or its executable cannot
// be found.
func identity(lim Limits) string {
	if len(lim.Command) == 0 {
		return ""
	}
	exe, err := exec.LookPath(lim.Command[0])
	if err != nil {
		return ""
	}
	if exe, err = filepath.Abs(exe); err != nil {
		return ""
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	cpu, mem := lim.CPUTime, lim.MemoryBytes
	return fmt.Sprintf("%s\x00%d\x00%d\x00%s\x00%d\x00%d", exe, fi.Size(), fi.ModTime().UnixNano(),
		strings.Join(lim.Command[1:], "\x00"), cpu, mem)
}
