package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// owners records which file serves each tool name, so that a clash is
// decided the same way across restarts (issue 10 finding 14): the file
// that held a name first keeps it. Without the record, a module refused
// for a clash at run time took the name at the next start whenever its
// file name sorted first, and the legitimate module's tools vanished.
// Records are by file name within the folder; a name no longer served
// keeps its record, which only ever breaks ties.
type owners struct {
	path   string            // the state file; "" keeps records in memory only
	names  map[string]string // tool name -> file name
	logger *slog.Logger
}

type ownersFile struct {
	Tools map[string]string `json:"tools"`
}

// loadOwners reads the state file; a missing or unreadable one starts
// empty (an unreadable one with a warning: clashes then go by file order).
func loadOwners(path string, logger *slog.Logger) *owners {
	o := &owners{path: path, names: map[string]string{}, logger: logger}
	if path == "" {
		return o
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return o
	}
	var f ownersFile
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err != nil {
		logger.Warn("tool name owners: cannot read the record; a clash goes to the file first in name order", "file", path, "err", err)
		return o
	}
	if f.Tools != nil {
		o.names = f.Tools
	}
	return o
}

// admitOrder returns the indices of fresh in the order to admit them:
// files recorded as the owner of one of their tools first, then the rest,
// each group in file name order (fresh is sorted).
func (o *owners) admitOrder(fresh []string, loaded []loadResult) []int {
	order := make([]int, 0, len(fresh))
	var rest []int
	for i, p := range fresh {
		if o.ownsAny(p, loaded[i]) {
			order = append(order, i)
		} else {
			rest = append(rest, i)
		}
	}
	return append(order, rest...)
}

func (o *owners) ownsAny(path string, res loadResult) bool {
	if res.mod == nil {
		return false
	}
	for _, t := range res.mod.Tools {
		if o.names[t.Name] == filepath.Base(path) {
			return true
		}
	}
	return false
}

// record notes the owner of every tool now served and saves the record if
// it changed. A record that cannot be written costs only determinism.
func (o *owners) record(files map[string]*liveFile) {
	changed := false
	for p, f := range files {
		for _, r := range f.recs {
			if base := filepath.Base(p); o.names[r.Name] != base {
				o.names[r.Name] = base
				changed = true
			}
		}
	}
	if !changed || o.path == "" {
		return
	}
	if err := o.save(); err != nil {
		o.logger.Warn("tool name owners: cannot save the record; after a restart a clash goes to the file first in name order",
			"file", o.path, "err", err)
	}
}

func (o *owners) save() error {
	b, err := json.MarshalIndent(ownersFile{Tools: o.names}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.path), filepath.Base(o.path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), o.path)
}

// OwnersFileFor is where serve keeps the owners record of a plugins
// folder: beside the compilation cache (a folder of the operator's that
// outlives restarts), one file per folder. Empty when there is no cache.
func OwnersFileFor(cacheDir, pluginsDir string) string {
	if cacheDir == "" {
		return ""
	}
	abs, err := filepath.Abs(pluginsDir)
	if err != nil {
		abs = pluginsDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cacheDir, "owners", hex.EncodeToString(sum[:8])+".json")
}
