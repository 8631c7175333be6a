package events

import (
	"fmt"
	"sync"
)

// streamLimits counts open event streams, in total and per identity. It is
// safe for concurrent use.
type streamLimits struct {
	max, perIdentity int

	mu    sync.Mutex
	total int
	by    map[string]int
}

func newStreamLimits(max, perIdentity int) *streamLimits {
	return &streamLimits{max: max, perIdentity: perIdentity, by: map[string]int{}}
}

// acquire takes a stream slot for identity, or says which limit is full.
// The release it returns must be called exactly once.
func (l *streamLimits) acquire(identity string) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.by[identity] >= l.perIdentity:
		return nil, fmt.Errorf("toolhost events: %s already has %d event streams open, the limit per identity; close one first",
			describeIdentity(identity), l.by[identity])
	case l.total >= l.max:
		return nil, fmt.Errorf("toolhost events: the server already has %d event streams open, its limit; try again later", l.total)
	}
	l.total++
	l.by[identity]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.by[identity]--; l.by[identity] == 0 {
				delete(l.by, identity)
			}
		})
	}, nil
}

func describeIdentity(identity string) string {
	if identity == "" {
		return "the anonymous client (this server has no tokens)"
	}
	return fmt.Sprintf("identity %q", identity)
}
