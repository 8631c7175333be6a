package loader

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long Watch waits after the last change in the
// folder before rescanning: a copy lands in several writes, and one rescan
// should see the finished file.
const DefaultDebounce = 250 * time.Millisecond

// Watch rescans the folder whenever a .wasm file in it is created,
// written, renamed or removed, until ctx ends. debounce <= 0 means
// DefaultDebounce. A file caught half-written fails to load, is remembered
// by its sha256, and loads when the write completes (new bytes, new sha).
func (l *Live) Watch(ctx context.Context, debounce time.Duration) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", l.dir, err)
	}
	defer w.Close()
	if err := w.Add(l.dir); err != nil {
		return fmt.Errorf("watching %s: %w", l.dir, err)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if filepath.Ext(ev.Name) == ".wasm" {
				timer.Reset(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			l.logger.Warn("plugins folder watch error", "dir", l.dir, "err", err)
		case <-timer.C:
			if _, err := l.Rescan(ctx); err != nil {
				l.logger.Warn("plugins folder rescan failed", "dir", l.dir, "err", err)
			}
		}
	}
}
