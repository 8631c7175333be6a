package transport

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelFilter keeps the response of a cancelled tools/call off HTTP, as
// countingConn does on stdio: the SDK writes a response for every
// request, and a client that sent notifications/cancelled but kept the
// call's stream open would receive it (the TypeScript SDK then reports a
// response for an unknown id). It watches the POSTs of each session: a
// tools/call's stream is wrapped, a notifications/cancelled marks the
// call it names, and the marked call's response event is dropped.
type cancelFilter struct {
	maxBody int64

	mu    sync.Mutex
	calls map[callRef]*watchedCall
}

// callRef names a call: its session and JSON-RPC id.
type callRef struct {
	session string
	id      jsonrpc.ID
}

type watchedCall struct {
	mu        sync.Mutex
	cancelled bool
}

func newCancelFilter(maxBody int64) *cancelFilter {
	if maxBody <= 0 {
		maxBody = mcp.DefaultMaxRequestBodyBytes
	}
	return &cancelFilter{maxBody: maxBody, calls: map[callRef]*watchedCall{}}
}

func (f *cancelFilter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		if r.Method != http.MethodPost || session == "" {
			h.ServeHTTP(w, r)
			return
		}
		req, ok := f.peek(r).(*jsonrpc.Request)
		switch {
		case !ok:
		case req.Method == "tools/call" && req.ID.IsValid():
			ref := callRef{session, req.ID}
			c := &watchedCall{}
			f.mu.Lock()
			f.calls[ref] = c
			f.mu.Unlock()
			defer func() {
				f.mu.Lock()
				if f.calls[ref] == c {
					delete(f.calls, ref)
				}
				f.mu.Unlock()
			}()
			w = &cancelWriter{ResponseWriter: w, call: c, id: req.ID}
		case req.Method == "notifications/cancelled" && !req.ID.IsValid():
			if id, ok := cancelledID(req.Params); ok {
				f.mu.Lock()
				c := f.calls[callRef{session, id}]
				f.mu.Unlock()
				if c != nil {
					c.mu.Lock()
					c.cancelled = true
					c.mu.Unlock()
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

// peek decodes the request body as one JSON-RPC message and puts the body
// back for the SDK. A body too large, a batch, or anything else that
// does not decode is left for the SDK to judge (nil). A body front has
// read already comes with its message, decoded once.
func (f *cancelFilter) peek(r *http.Request) jsonrpc.Message {
	if fb, ok := r.Body.(*frontBody); ok && fb.msg != nil && int64(fb.Size()) <= f.maxBody {
		return fb.msg
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, f.maxBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || int64(len(b)) > f.maxBody {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil
	}
	return msg
}

// cancelWriter drops the response event of its call once the call is
// cancelled; progress notifications and everything else pass. The SDK
// writes each server-sent event in one Write.
type cancelWriter struct {
	http.ResponseWriter
	call *watchedCall
	id   jsonrpc.ID
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.call.mu.Lock()
	cancelled := w.call.cancelled
	w.call.mu.Unlock()
	if cancelled && respondsTo(p, w.id) {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps the SSE stream flowing through the wrapper.
func (w *cancelWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// respondsTo reports whether p, one server-sent event (or a plain JSON
// body), carries the JSON-RPC response with id.
func respondsTo(p []byte, id jsonrpc.ID) bool {
	data := p
	if i := bytes.Index(p, []byte("data: ")); i >= 0 {
		data = p[i+len("data: "):]
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			data = data[:j]
		}
	}
	msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(data))
	if err != nil {
		return false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return ok && resp.ID == id
}
