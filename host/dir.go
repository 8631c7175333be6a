package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// LoadDir loads every *.wasm file in dir, compiling them concurrently, and
// writes one progress line per file to progress (nil for none). A file that
// fails to load is reported in the returned errors and skipped; so is a file
// declaring a tool name an earlier file (in name order) already declared.
// The error result is only for a folder that cannot be read.
func (r *Runtime) LoadDir(ctx context.Context, dir string, progress io.Writer) ([]*Module, []*LoadError, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("plugins folder: %w", err)
	}
	sort.Strings(paths)
	type outcome struct {
		mod  *Module
		err  error
		took time.Duration
	}
	results := make([]outcome, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, p := range paths {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			m, err := r.LoadFile(ctx, p)
			results[i] = outcome{m, err, time.Since(start)}
		})
	}
	wg.Wait()

	var mods []*Module
	var errs []*LoadError
	owner := map[string]string{} // tool name -> file
	for i, res := range results {
		if res.err != nil {
			le := asLoadError(paths[i], res.err)
			errs = append(errs, le)
			report(progress, "skip %s: %s", paths[i], le.Reason)
			continue
		}
		if clash := clashes(res.mod, owner); clash != "" {
			_ = res.mod.Close(ctx)
			le := &LoadError{Path: paths[i], Reason: clash}
			errs = append(errs, le)
			report(progress, "skip %s: %s", paths[i], clash)
			continue
		}
		names := make([]string, len(res.mod.Tools))
		for j, t := range res.mod.Tools {
			owner[t.Name] = paths[i]
			names[j] = t.Name
		}
		mods = append(mods, res.mod)
		report(progress, "load %s: %d tools (%s) in %v", paths[i], len(names), strings.Join(names, ", "), res.took.Round(time.Millisecond))
	}
	return mods, errs, nil
}

func clashes(m *Module, owner map[string]string) string {
	for _, t := range m.Tools {
		if other, ok := owner[t.Name]; ok {
			return fmt.Sprintf("tool %q is also declared by %s; tool names must be unique across the plugins folder", t.Name, other)
		}
	}
	return ""
}

func asLoadError(path string, err error) *LoadError {
	if le, ok := err.(*LoadError); ok {
		return le
	}
	return &LoadError{Path: path, Reason: err.Error(), Err: err}
}

func report(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "toolhost: "+format+"\n", args...)
	}
}
