package transport

import (
	"net/http"
	"strings"
)

// CodeSessionNotFound is the JSON-RPC error code of a 404 for an unknown or
// closed MCP session: the code the TypeScript SDK uses, which its clients
// read as "start a new session".
const CodeSessionNotFound = -32001

// rpcErrorBodies turns the SDK's plain-text 403 and 404 answers on /mcp
// (unknown session, session of another identity, refused host) into
// JSON-RPC errors without an id, the body MCP's transport spec asks for;
// every other answer passes unchanged.
func rpcErrorBodies(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorBodyWriter{ResponseWriter: w}
		h.ServeHTTP(ew, r)
		ew.finish()
	})
}

// errorBodyWriter holds back a plain-text 403 or 404 so that finish can
// send its text as a JSON-RPC error instead.
type errorBodyWriter struct {
	http.ResponseWriter
	status  int // the held-back status; 0 when passing through
	text    strings.Builder
	started bool
}

func (w *errorBodyWriter) WriteHeader(code int) {
	if w.started {
		return
	}
	w.started = true
	if (code == http.StatusForbidden || code == http.StatusNotFound) &&
		strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *errorBodyWriter) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if w.status != 0 {
		if w.text.Len() < 4096 {
			w.text.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush keeps streaming answers (SSE) working through the wrapper.
func (w *errorBodyWriter) Flush() {
	if w.status != 0 {
		return
	}
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *errorBodyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *errorBodyWriter) finish() {
	if w.status == 0 {
		return
	}
	code := -32600
	if w.status == http.StatusNotFound {
		code = CodeSessionNotFound
	}
	writeRPCError(w.ResponseWriter, w.status, code, strings.TrimSpace(w.text.String()))
}
