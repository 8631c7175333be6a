package transport_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

// String is everything written so far.
func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When stdin closes with calls in flight — running, or read but not yet
// started — each is cancelled and audited as cancelled before the
// connection ends, and none is answered: closing stdin is how an MCP
// client shuts a stdio server down. The SDK alone dropped a call it had
// queued, without an answer or a record (issue 20).
func TestStdioEndOfInputCancelsCalls(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := map[bool]string{false: "2025-11-25", true: "2026-07-28"}[stateless]
		t.Run(name, func(t *testing.T) {
			h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
			reg := h.registry(t)
			logs := &lockedBuffer{}
			srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			inR, inW := io.Pipe()
			out := &lockedBuffer{}
			ss, err := srv.ConnectStdio(t.Context(), &transport.StdioTransport{In: inR, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			meta := ""
			if stateless {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			} else {
				io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"eof","version":"0"}}}`+"\n")
				io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			}
			// Three calls and the end of input in one go: the last ones
			// are read before they can start.
			var lines strings.Builder
			for _, id := range []string{"1", "2", "3"} {
				lines.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"block_ctx","arguments":{}` + meta + `}}` + "\n")
			}
			io.WriteString(inW, lines.String())
			inW.Close()
			if err := ss.Wait(); err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(logs.String(), `"msg":"call"`); n != 3 || strings.Count(logs.String(), `"outcome":"cancelled"`) != 3 {
				t.Errorf("%d call records, want 3, each cancelled:\n%s", n, logs.String())
			}
			for _, id := range []string{`"id":1`, `"id":2`, `"id":3`} {
				if strings.Contains(out.String(), id) {
					t.Errorf("a cancelled call was answered: %s", out.String())
				}
			}
		})
	}
}
