package abi

import (
	"bytes"
	"testing"
)

// The fast path for {"result":V} returns exactly what the general decoder
// returns, and leaves everything else to it.
func FuzzResponseFastPath(f *testing.F) {
	for _, s := range []string{
		`{"result":1}`, `{"result": {"a":[1,2]} }`, "{\"result\":\t\"x\"\n}", `{"result":null}`,
		`{"result":}`, `{"result":1}}`, `{"result":1,"error":{"kind":"schema","message":"m"}}`,
		`{"result":1,"result":2}`, `{"result":"\xff"}`, "{\"result\":1\u00a0}", `{"result":1 2}`,
		`{"result":{"error":1}}`, `{"result":[}`, `{"error":{"kind":"schema","message":"m"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := parseResult(b)
		if !ok {
			return
		}
		slow, err := parseResponse(b)
		if err != nil {
			t.Fatalf("%q: the fast path accepts what the decoder refuses: %v", b, err)
		}
		if !bytes.Equal(fast.Result, slow.Result) || slow.Error != nil {
			t.Fatalf("%q: fast path %q, decoder %q %v", b, fast.Result, slow.Result, slow.Error)
		}
	})
}

func TestResponseFastPathTakes(t *testing.T) {
	for s, want := range map[string]bool{
		`{"result":1}`: true, `{"result": {"a":[1,2]} }`: true, `{"result":null}`: true,
		`{"result":1,"error":{"kind":"schema","message":"m"}}`: false, `{"result":1,"result":2}`: false,
		"{\"result\":1\u00a0}": false, `{"result":"\xff"}`: false, `{ "result":1}`: false,
	} {
		if _, ok := parseResult([]byte(s)); ok != want {
			t.Errorf("%q: fast path %v, want %v", s, ok, want)
		}
	}
}
