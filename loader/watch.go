package loader

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long Watch waits after the last change in the
// folder before rescanning: a copy lands in several writes, and one rescan
// should see the finished file.
const DefaultDebounce = 250 * time.Millisecond

// Watch rescans the folder whenever a .wasm file in it (or
// Options.AdmitFile) is created, written, renamed or removed, until ctx
// ends. debounce <= 0 means
// DefaultDebounce. A file caught half-written fails to load, is remembered
// by its sha256, and loads when the write completes (new bytes, new sha).
// A rescan that cannot read the folder (see ScanError) leaves the tools as
// they were and is retried after RetryMin, doubling up to RetryMax, until
// one reads everything: the cause (say, file descriptors running out) may
// pass without any file changing.
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
	// due fires the next rescan: debounce after the last change, or the
	// backoff after a failed one. A new channel replaces the old, so only
	// the latest schedule counts.
	var due <-chan time.Time
	var backoff time.Duration
	l.mu.Lock()
	if l.retry {
		backoff = RetryMin
		due = l.after(backoff)
	}
	l.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if l.watchedName(ev.Name) {
				due = l.after(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// Events may have been lost (the kernel queue overflowed):
			// rescan rather than trust the last picture.
			l.logger.Warn("plugins folder watch error; rescanning", "dir", l.dir, "err", err)
			due = l.after(debounce)
		case <-due:
			due = nil
			_, err := l.Rescan(ctx)
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return nil
			}
			if err != nil {
				backoff = nextBackoff(backoff)
				l.logger.Warn("plugins folder rescan could not read everything; tools kept as they were, retrying",
					"dir", l.dir, "err", err, "retry_in", backoff)
				due = l.after(backoff)
				continue
			}
			backoff = 0
		}
	}
}
