package events

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// HandlerOptions configure Handler. The zero value serves every event to
// every client, within the default bounds: what a server without
// authentication (one user, on loopback) wants.
type HandlerOptions struct {
	// Identity returns the authenticated identity of a request; nil, or
	// an empty identity, means the server has no authentication and the
	// client sees every event.
	Identity func(*http.Request) string
	// Operator reports whether an identity may see every identity's
	// events; nil means none may. Everyone else sees only the events of
	// their own calls and the server's own events.
	Operator func(identity string) bool
	// MaxStreams caps the event streams open at once; 0 means
	// DefaultMaxStreams.
	MaxStreams int
	// MaxStreamsPerIdentity caps one identity's streams; 0 means
	// DefaultMaxStreamsPerIdentity.
	MaxStreamsPerIdentity int
	// MaxPrefixes caps the distinct type prefixes of one stream; 0 means
	// DefaultMaxPrefixes.
	MaxPrefixes int
	// Buffer is each stream's buffer, in events; 0 means 1024.
	Buffer int
}

// Defaults of HandlerOptions. Type prefixes are also capped at
// MaxPrefixLen bytes each: event types are short names.
const (
	DefaultMaxStreams            = 64
	DefaultMaxStreamsPerIdentity = 8
	DefaultMaxPrefixes           = 16
	MaxPrefixLen                 = 128
)

// Handler streams the bus as Server-Sent Events: one `data: <event JSON>`
// message per event. The query parameter `type` (repeatable, or
// comma-separated) keeps only events whose type starts with one of its
// values. The stream ends when the client leaves or CloseStreams is
// called. A client that falls behind loses events; the stream then carries
// a `event: dropped` message with the running count.
//
// A client sees the events of its own identity's calls and the server's
// (see HandlerOptions.Identity and Operator). A stream beyond the stream
// limits is refused with 429 Too Many Requests, a filter beyond the prefix
// limits with 400 Bad Request, each saying which limit. Each Handler
// counts its own streams: serve one.
func (b *Bus) Handler(opts HandlerOptions) http.Handler {
	streams := newStreamLimits(orDefault(opts.MaxStreams, DefaultMaxStreams),
		orDefault(opts.MaxStreamsPerIdentity, DefaultMaxStreamsPerIdentity))
	maxPrefixes := orDefault(opts.MaxPrefixes, DefaultMaxPrefixes)
	buf := orDefault(opts.Buffer, 1024)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		prefixes, err := typePrefixes(r, maxPrefixes)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		identity := ""
		if opts.Identity != nil {
			identity = opts.Identity(r)
		}
		release, err := streams.acquire(identity)
		if err != nil {
			w.Header().Set("Retry-After", "10")
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		}
		defer release()
		operator := opts.Operator != nil && opts.Operator(identity)
		sub := b.SubscribeFilter(buf, Filter{Prefixes: prefixes, Scoped: identity != "" && !operator, Caller: identity})
		defer sub.Close()
		b.stream(w, r, flusher, sub)
	})
}

func (b *Bus) stream(w http.ResponseWriter, r *http.Request, flusher http.Flusher, sub *Subscription) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": toolhost events\n\n")
	flusher.Flush()
	var reported uint64
	for {
		select {
		case <-r.Context().Done():
			return
		case <-b.streamsDone:
			return
		case e, ok := <-sub.C:
			if !ok {
				return
			}
			if d := sub.Dropped(); d != reported {
				reported = d
				fmt.Fprintf(w, "event: dropped\ndata: %d\n\n", d)
			}
			data, err := json.Marshal(e)
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "data: %s\n\n", data)
			flusher.Flush()
		}
	}
}

// typePrefixes reads the `type` query parameters: distinct, non-empty,
// at most max of them, each at most MaxPrefixLen bytes.
func typePrefixes(r *http.Request, max int) ([]string, error) {
	seen := map[string]bool{}
	var prefixes []string
	for _, v := range r.URL.Query()["type"] {
		for p := range strings.SplitSeq(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" || seen[p] {
				continue
			}
			if len(p) > MaxPrefixLen {
				return nil, fmt.Errorf("toolhost events: type prefix %.32q… is %d bytes; the limit is %d (event types are short names such as dispatch.result)", p, len(p), MaxPrefixLen)
			}
			if len(prefixes) == max {
				return nil, fmt.Errorf("toolhost events: more than %d type prefixes in one stream; the limit is %d (use shorter prefixes such as dispatch. or plan.)", max, max)
			}
			seen[p] = true
			prefixes = append(prefixes, p)
		}
	}
	return prefixes, nil
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}
