package guest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// fakeHost replaces the host call for one test: it records the request
// JSON and answers with resp.
func fakeHost(t *testing.T, resp string) *abi.HTTPRequest {
	t.Helper()
	var seen abi.HTTPRequest
	old := roundTrip
	roundTrip = func(req []byte) ([]byte, error) {
		if err := json.Unmarshal(req, &seen); err != nil {
			t.Fatalf("request JSON %s: %v", req, err)
		}
		return []byte(resp), nil
	}
	t.Cleanup(func() { roundTrip = old })
	return &seen
}

func TestClientDo(t *testing.T) {
	seen := fakeHost(t, `{"status":200,"headers":{"Content-Type":["text/plain"]},"body_base64":"AAEC"}`)
	c := &Client{Header: Header{"User-Agent": {"tool/1"}, "Accept": {"*/*"}}}
	req := NewRequest("PUT", "https://api.example.com/x", []byte("hi"))
	req.Header.Set("accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Method != "PUT" || seen.URL != "https://api.example.com/x" || seen.BodyBase64 != "aGk=" ||
		seen.Headers["Accept"][0] != "application/json" || seen.Headers["User-Agent"][0] != "tool/1" {
		t.Fatalf("request %+v", seen)
	}
	if resp.StatusCode != 200 || string(resp.Body) != "\x00\x01\x02" || resp.Header.Get("content-type") != "text/plain" {
		t.Fatalf("response %+v", resp)
	}
}

// A 429 or 503 is an answer and a transient error carrying Retry-After;
// returned from a tool it becomes retry_after_ms on the wire.
func TestClient429(t *testing.T) {
	fakeHost(t, `{"status":429,"retry_after_ms":2500,"body":"slow down"}`)
	resp, err := Get("https://api.example.com/")
	var ge *Error
	var se *StatusError
	if !errors.As(err, &ge) || ge.Kind != abi.KindTransient || ge.RetryAfter != 2500*time.Millisecond || !errors.As(err, &se) || se.StatusCode != 429 {
		t.Fatalf("err = %v, want a transient StatusError with 2.5s", err)
	}
	if resp == nil || string(resp.Body) != "slow down" {
		t.Fatalf("response %+v, want the answer too", resp)
	}
	r := fromError(err)
	if r.Error == nil || r.Error.Kind != abi.KindTransient || r.Error.RetryAfterMS != 2500 {
		t.Fatalf("wire error %+v", r.Error)
	}
}

func TestClientErrors(t *testing.T) {
	tests := []struct {
		resp  string
		kind  abi.ErrorKind
		grant string
		retry time.Duration
	}{
		{`{"error":{"kind":"denied","grant":"hosts","message":"host x is not granted"}}`, abi.KindInternal, "hosts", 0},
		{`{"error":{"kind":"too_large","grant":"max_response_bytes","message":"big"}}`, abi.KindInternal, "max_response_bytes", 0},
		{`{"error":{"kind":"rate_limited","message":"quota q","retry_after_ms":700}}`, abi.KindTransient, "", 700 * time.Millisecond},
		{`{"error":{"kind":"unavailable","message":"connection refused"}}`, abi.KindTransient, "", 0},
	}
	for _, tt := range tests {
		fakeHost(t, tt.resp)
		_, err := Get("https://x/")
		var ge *Error
		var he *HTTPError
		if !errors.As(err, &ge) || ge.Kind != tt.kind || ge.RetryAfter != tt.retry || !errors.As(err, &he) || he.Grant != tt.grant {
			t.Errorf("%s: err = %v", tt.resp, err)
		}
	}
}

func TestClientOutsideWasm(t *testing.T) {
	if _, err := Get("https://x/"); !errors.Is(err, errNoEgress) {
		t.Fatalf("err = %v, want errNoEgress", err)
	}
}

func TestCanonicalKey(t *testing.T) {
	for in, want := range map[string]string{"content-type": "Content-Type", "X-API-KEY": "X-Api-Key", "etag": "Etag"} {
		if got := canonicalKey(in); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", in, got, want)
		}
	}
}
