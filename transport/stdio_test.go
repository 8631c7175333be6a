package transport_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

// malformedLines are inputs that once ended `serve --stdio`, each with the
// JSON-RPC error code and id its answer must carry.
var malformedLines = []struct {
	name, line string
	code       int
	id         string // the raw id echoed, "null" when none can be
}{
	{"not JSON", `hello`, -32700, "null"},
	{"truncated", `{"jsonrpc":"2.0","id":1,"meth`, -32700, "null"},
	{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, -32600, "7"},
	{"no version", `{"id":"v","method":"ping"}`, -32600, `"v"`},
	{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600, "null"},
	{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, "null"},
	{"id beyond 64 bits", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"ping"}`, -32600, "null"},
	{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, -32600, "null"},
	{"id -0", `{"jsonrpc":"2.0","id":-0,"method":"ping"}`, -32600, "null"},
	{"id in exponent form", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, -32600, "null"},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
	{"number", `42`, -32600, "null"},
	{"string", `"ping"`, -32600, "null"},
	{"null", `null`, -32600, "null"},
	{"empty batch", `[]`, -32600, "null"},
	{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, "null"},
	{"empty method", `{"jsonrpc":"2.0","id":9,"method":""}`, -32600, "9"},
	{"method not a string", `{"jsonrpc":"2.0","id":10,"method":5}`, -32600, "10"},
	{"params not an object", `{"jsonrpc":"2.0","id":11,"method":"ping","params":"x"}`, -32600, "11"},
	{"neither request nor response", `{"jsonrpc":"2.0","id":12}`, -32600, "12"},
	{"response without id", `{"jsonrpc":"2.0","result":{}}`, -32600, "null"},
}

// pipes is a StdioTransport served by a real Server, driven line by line.
type pipes struct {
	in  *io.PipeWriter
	out *bufio.Reader
}

func servePipes(t *testing.T, maxLine int) *pipes {
	t.Helper()
	p := openPipes(t, maxLine)
	p.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"pipes","version":"0"}}}`)
	if resp := p.recv(t); resp.Error != nil {
		t.Fatalf("initialize: %+v", resp.Error)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

// openPipes is servePipes before initialize.
func openPipes(t *testing.T, maxLine int) *pipes {
	t.Helper()
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Logger: slog.New(slog.DiscardHandler)})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.ConnectStdio(t.Context(), &transport.StdioTransport{In: inR, Out: outW, MaxLineBytes: maxLine})
	if err != nil {
		t.Fatal(err)
	}
	p := &pipes{in: inW, out: bufio.NewReader(outR)}
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // the session may still be writing
		ss.Wait()
		outR.Close()
	})
	return p
}

func (p *pipes) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("write %q: %v", line, err)
	}
}

type rpcAnswer struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (p *pipes) recv(t *testing.T) rpcAnswer {
	t.Helper()
	line, err := p.out.ReadString('\n')
	if err != nil {
		t.Fatalf("read: %v (after %q)", err, line)
	}
	var a rpcAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil || a.Version != "2.0" {
		t.Fatalf("answer %q is not JSON-RPC 2.0: %v", line, err)
	}
	return a
}

// pingAnswered sends a valid request and wants its answer: the connection
// survived what came before.
func (p *pipes) pingAnswered(t *testing.T, id string) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":"`+id+`","method":"ping"}`)
	a := p.recv(t)
	if string(a.ID) != `"`+id+`"` || a.Error != nil || a.Result == nil {
		t.Fatalf("ping %s: got id %s, error %+v", id, a.ID, a.Error)
	}
}

func TestStdioSurvivesMalformedLines(t *testing.T) {
	p := servePipes(t, 0)
	for _, tc := range malformedLines {
		t.Run(tc.name, func(t *testing.T) {
			p.send(t, tc.line)
			a := p.recv(t)
			if a.Error == nil || a.Error.Code != tc.code || string(a.ID) != tc.id {
				t.Fatalf("%s: got id %s error %+v; want code %d, id %s", tc.line, a.ID, a.Error, tc.code, tc.id)
			}
			p.pingAnswered(t, "after-"+tc.name)
		})
	}
	t.Run("blank lines are skipped", func(t *testing.T) {
		p.send(t, "")
		p.send(t, "  \r")
		p.pingAnswered(t, "after-blank")
	})
	t.Run("ids at the edges are echoed exactly", func(t *testing.T) {
		for _, id := range []string{"9007199254740992", "-9007199254740992", "0", `""`, `"\u00e9"`} {
			p.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
			if a := p.recv(t); string(a.ID) != id && !(id == `"\u00e9"` && string(a.ID) == `"é"`) || a.Error != nil {
				t.Fatalf("id %s: got %s %+v", id, a.ID, a.Error)
			}
		}
	})
	t.Run("CRLF line endings", func(t *testing.T) {
		p.send(t, `{"jsonrpc":"2.0","id":"crlf","method":"ping"}`+"\r")
		if a := p.recv(t); string(a.ID) != `"crlf"` || a.Error != nil {
			t.Fatalf("got %+v", a)
		}
	})
	t.Run("a tool call still works", func(t *testing.T) {
		p.send(t, `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"text.count","arguments":{"text":"a b c"}}}`)
		a := p.recv(t)
		if a.Error != nil || !strings.Contains(string(a.Result), `"words":3`) {
			t.Fatalf("got %s %+v", a.Result, a.Error)
		}
	})
}

func TestStdioOverlongLineResynchronises(t *testing.T) {
	p := servePipes(t, 1024)
	// Longer than the limit and longer than the reader's buffer, so the
	// skipping spans many reads.
	p.send(t, `{"jsonrpc":"2.0","id":"big","method":"ping","params":{"pad":"`+strings.Repeat("x", 200<<10)+`"}}`)
	a := p.recv(t)
	if a.Error == nil || a.Error.Code != -32600 || string(a.ID) != "null" || !strings.Contains(a.Error.Message, "1024") {
		t.Fatalf("got id %s error %+v; want -32600 naming the limit", a.ID, a.Error)
	}
	p.pingAnswered(t, "after-big")
	// A line just under the limit is served.
	p.send(t, `{"jsonrpc":"2.0","id":"fits","method":"ping","params":{"pad":"`+strings.Repeat("x", 900)+`"}}`)
	if a := p.recv(t); string(a.ID) != `"fits"` || a.Error != nil {
		t.Fatalf("got %+v", a)
	}
}

func TestStdioLastLineWithoutNewlineThenEOF(t *testing.T) {
	in := io.NopCloser(strings.NewReader("\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	conn, err := (&transport.StdioTransport{In: in, Out: io.Discard}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if msg, err := conn.Read(t.Context()); err != nil || msg == nil {
		t.Fatalf("the last line: %v %v", msg, err)
	}
	if _, err := conn.Read(t.Context()); err != io.EOF {
		t.Fatalf("after the last line: %v; want io.EOF", err)
	}
}

func TestStdioCloseUnblocksRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	conn, err := (&transport.StdioTransport{In: inR, Out: io.Discard}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(t.Context())
		read <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-read; err == nil {
		t.Fatal("Read returned a message after Close")
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// No response leaves the stdio transport with the JSON-RPC code 0 that the
// SDK gives any error that is not a *jsonrpc.Error: its session-order
// refusals become -32600, anything else -32603, and a proper code stays.
func TestStdioNeverWritesCodeZero(t *testing.T) {
	var out strings.Builder
	inR, inW := io.Pipe()
	defer inW.Close()
	conn, err := (&transport.StdioTransport{In: inR, Out: &out}).Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id, _ := jsonrpc.MakeID(float64(1))
	for _, e := range []error{
		fmt.Errorf("duplicate %q received", "initialize"),
		fmt.Errorf("method %q is invalid during session initialization", "tools/list"),
		io.EOF,
		&jsonrpc.Error{Code: 0, Message: "zero"},
		fmt.Errorf("wrapped: %w", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}),
		&jsonrpc.Error{Code: -32021, Message: "missing capability"},
	} {
		if err := conn.Write(t.Context(), &jsonrpc.Response{ID: id, Error: e}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var a rpcAnswer
		if err := json.Unmarshal([]byte(line), &a); err != nil || a.Error == nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, fmt.Sprintf("%d %s", a.Error.Code, a.Error.Message))
	}
	want := []string{
		`-32600 duplicate "initialize" received`,
		`-32600 method "tools/list" is invalid during session initialization`,
		`-32603 EOF`,
		`-32603 zero`,
		`-32602 wrapped: bad`,
		`-32021 missing capability`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("codes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
