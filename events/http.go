package events

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Handler streams the bus as Server-Sent Events: one `data: <event JSON>`
// message per event. The query parameter `type` (repeatable, or
// comma-separated) keeps only events whose type starts with one of its
// values. The stream ends when the client leaves or CloseStreams is
// called. A client that falls behind loses events; the stream then carries
// a `event: dropped` message with the running count.
func (b *Bus) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		flusher, ok := w.(http.Flusher)
		if !ok {
			http.Error(w, "streaming unsupported", http.StatusInternalServerError)
			return
		}
		var prefixes []string
		for _, v := range r.URL.Query()["type"] {
			for p := range strings.SplitSeq(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					prefixes = append(prefixes, p)
				}
			}
		}
		sub := b.Subscribe(1024, prefixes...)
		defer sub.Close()
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
	})
}
