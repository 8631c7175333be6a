package transport_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

var update = flag.Bool("update", false, "rewrite the response sections of testdata/wire/*.txtar from the server's answers")

// TestWire replays the exchanges of testdata/wire/*.txtar against the
// Streamable HTTP handler and compares the answers byte for byte (after
// indenting JSON and masking random request ids, and task ids, times and
// TTLs: see maskTask).
//
// A file is a comment, then pairs of sections:
//
//	-- request --
//	POST                                   (method; Content-Type and Accept are added)
//	Mcp-Protocol-Version: 2025-11-25       (optional headers; $SESSION is the last session id,
//	                                        $ORIGIN the server's own origin, http://127.0.0.1:PORT)
//
//	{"jsonrpc":"2.0","id":1,...}           (body, sent as is)
//	-- response --
//	200                                    (status)
//	Content-Type: text/event-stream        (base media type)
//	Mcp-Session-Id: $SESSION               (when set)
//
//	{ ...each JSON message, indented... }
//
// Run `go test ./transport/ -run TestWire -update` to rewrite the response
// sections after an intended change, and read the diff.
func TestWire(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no wire tests: %v", err)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runWire(t, path)
		})
	}
}

func runWire(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	comment, sections := parseTxtar(data)
	if len(sections) == 0 || len(sections)%2 != 0 {
		t.Fatalf("%s: want request/response pairs, got %d sections", path, len(sections))
	}
	opts := transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)}
	h := &harness{fakes: fakes{entered: make(chan struct{}), release: make(chan struct{})}}
	reg := h.registry(t)
	srv := transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, opts)
	// The origin guard serve puts in front of every endpoint, allowing no
	// foreign origin; $ORIGIN in a request is the server's own.
	guard, err := transport.ParseOrigins(nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(guard.Guard(srv.HTTPHandler()))
	defer ts.Close()

	session, task := "", ""
	changed := false
	for i := 0; i < len(sections); i += 2 {
		req, resp := sections[i], sections[i+1]
		if req.name != "request" || resp.name != "response" {
			t.Fatalf("%s: section %d is %q then %q, want request then response", path, i, req.name, resp.name)
		}
		got := maskTask(exchange(t, ts.URL+"/mcp", strings.NewReplacer("$SESSION", session, "$TASK", task, "$ORIGIN", ts.URL).Replace(req.data), &session), &task)
		if got != resp.data {
			if *update {
				sections[i+1].data = got
				changed = true
				continue
			}
			t.Errorf("%s: exchange %d:\nrequest:\n%s\ngot:\n%s\nwant:\n%s", path, i/2+1, req.data, got, resp.data)
		}
	}
	if changed {
		if err := os.WriteFile(path, formatTxtar(comment, sections), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// exchange sends one request section and renders the answer as a response
// section. A session id in the answer replaces *session.
func exchange(t *testing.T, url, section string, session *string) string {
	t.Helper()
	head, body, _ := strings.Cut(section, "\n\n")
	lines := strings.Split(head, "\n")
	req, err := http.NewRequest(strings.TrimSpace(lines[0]), url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			t.Fatalf("bad header line %q", l)
		}
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d\n", res.StatusCode)
	ct, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if ct != "" {
		fmt.Fprintf(&out, "Content-Type: %s\n", ct)
	}
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		*session = id
		out.WriteString("Mcp-Session-Id: $SESSION\n")
	}
	out.WriteString("\n")
	switch ct {
	case "application/json":
		out.WriteString(indentJSON(t, raw))
	case "text/event-stream":
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
				out.WriteString(indentJSON(t, []byte(d)))
			}
		}
	default:
		out.Write(raw)
	}
	return requestIDs.ReplaceAllString(out.String(), `"${1}request_id": "REQUEST_ID"`)
}

var requestIDs = regexp.MustCompile(`"(toolhost/)?request_id": "[0-9a-f]{16}"`)

// indentJSON keeps every token as sent (json.Indent never re-encodes a
// number), so an id's exact digits show.
func indentJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(b), "", "  "); err != nil {
		return string(b) + "\n"
	}
	buf.WriteString("\n")
	return buf.String()
}

type section struct{ name, data string }

// parseTxtar reads the txtar format (golang.org/x/tools/txtar) without the
// dependency: a comment, then "-- name --" lines opening each section.
func parseTxtar(data []byte) (string, []section) {
	var comment strings.Builder
	var secs []section
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if n, ok := strings.CutPrefix(trimmed, "-- "); ok && strings.HasSuffix(n, " --") {
			secs = append(secs, section{name: strings.TrimSuffix(n, " --")})
			continue
		}
		if len(secs) == 0 {
			comment.WriteString(line)
		} else {
			secs[len(secs)-1].data += line
		}
	}
	return comment.String(), secs
}

func formatTxtar(comment string, secs []section) []byte {
	var b bytes.Buffer
	b.WriteString(comment)
	for _, s := range secs {
		fmt.Fprintf(&b, "-- %s --\n", s.name)
		b.WriteString(s.data)
		if s.data != "" && !strings.HasSuffix(s.data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}
