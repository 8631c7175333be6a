package transport

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// frontSeeds are bodies whose message front hands to the cancel filter,
// or refuses to (nil), beside the ones jsonrpc.DecodeMessage reads.
var frontSeeds = []string{
	`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gate","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"gate","_meta":{"progressToken":"p"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}`,
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"abc"}}`,
	`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":{"x":1},"method":"tools/call"}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","id":2}`,
	`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
}

// TestFrontRequestIsTheDecodedOne: the cancel filter takes front's
// message instead of decoding the body itself, so wherever the SDK's
// decoder reads a request, front's must name the same method, id and
// cancelled id — what the filter looks at.
func TestFrontRequestIsTheDecodedOne(t *testing.T) {
	handed := 0
	for _, body := range frontSeeds {
		if checkFrontRequest(t, []byte(body)) {
			handed++
		}
	}
	if handed < 5 {
		t.Errorf("front handed %d of the seeds' messages to the filter; want the 5 plain requests at least", handed)
	}
}

func FuzzFrontRequest(f *testing.F) {
	for _, s := range frontSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkFrontRequest(t, body) })
}

// checkFrontRequest reports whether front hands body's message on, and
// fails t when that message differs from jsonrpc.DecodeMessage's.
func checkFrontRequest(t *testing.T, body []byte) bool {
	t.Helper()
	msg, single := readMessage(body)
	if !single || !msg.isRequest {
		return false
	}
	got := msg.request()
	if got == nil {
		return false
	}
	decoded, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		// The SDK refuses the body itself; a watch the filter sets for
		// it sees no response to drop.
		return true
	}
	want, ok := decoded.(*jsonrpc.Request)
	if !ok {
		t.Fatalf("%s: front reads a request, the SDK %T", body, decoded)
	}
	if got.Method != want.Method || got.ID != want.ID {
		t.Fatalf("%s: front reads %q id %v, the SDK %q id %v", body, got.Method, got.ID, want.Method, want.ID)
	}
	gid, gok := cancelledID(got.Params)
	wid, wok := cancelledID(want.Params)
	if gid != wid || gok != wok {
		t.Fatalf("%s: front's params name cancelled id %v (%v), the SDK's %v (%v)", body, gid, gok, wid, wok)
	}
	return true
}

// TestCancelFilterReadsFrontsMessage: on a session POST, the cancel
// filter takes the message front read rather than reading the body again
// (the SDK's decoder costs a 32 KiB buffer a call), except where front
// rewrote the body; either way the SDK gets the body front meant.
func TestCancelFilterReadsFrontsMessage(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		reused     bool // the filter used front's message
		wantID     string
	}{
		{"plain call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gate","arguments":{}}}`, true, `7`},
		{"cancellation", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, true, ``},
		{"id rewritten", `{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/call","params":{"name":"gate"}}`, false, `"toolhost-int-id:9007199254740993"`},
		{"task lifted", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"gate","task":{"ttl":1000}}}`, false, `8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reused bool
			var got jsonrpc.Message
			sdk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, reused = r.Body.(*frontBody)
				b, err := io.ReadAll(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				if got, err = jsonrpc.DecodeMessage(b); err != nil {
					t.Fatalf("the SDK would refuse %s: %v", b, err)
				}
			})
			f := &front{s: &Server{}, sessions: newCancelFilter(0).wrap(sdk), stateless: sdk, maxBody: 1 << 20}
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Mcp-Session-Id", "s1")
			f.ServeHTTP(httptest.NewRecorder(), req)
			if reused != tc.reused {
				t.Errorf("the filter used front's message: %v, want %v", reused, tc.reused)
			}
			if r, ok := got.(*jsonrpc.Request); !ok {
				t.Errorf("the SDK got %T, want a request", got)
			} else if id, _ := json.Marshal(r.ID.Raw()); tc.wantID != "" && string(id) != tc.wantID {
				t.Errorf("the SDK got id %s, want %s", id, tc.wantID)
			}
		})
	}
}
