package abi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/.

// FuzzParseResponse: ParseResponse never panics, rejects only with a
// *abi.ContractError, and anything it accepts survives a re-marshal and
// re-parse unchanged.
func FuzzParseResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := abi.ParseResponse(b)
		if err != nil {
			var ce *abi.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, not *abi.ContractError", err, err)
			}
			if r.Result != nil || r.Error != nil {
				t.Fatalf("rejected response %+v was not zero", r)
			}
			return
		}
		if (r.Result == nil) == (r.Error == nil) {
			t.Fatalf("accepted %q as %+v: want exactly one of result and error", b, r)
		}
		if r.Error != nil && (!r.Error.Kind.Valid() || r.Error.RetryAfterMS < 0) {
			t.Fatalf("accepted %q with error %+v", b, r.Error)
		}
		again := mustMarshal(t, r)
		r2, err := abi.ParseResponse(again)
		if err != nil {
			t.Fatalf("accepted %q, but its re-marshal %s is rejected: %v", b, again, err)
		}
		if got := mustMarshal(t, r2); !bytes.Equal(got, again) {
			t.Fatalf("round trip changed the response:\n in: %q\n 1st: %s\n 2nd: %s", b, again, got)
		}
		if r.Result != nil && !sameJSON(t, r.Result, r2.Result) {
			t.Fatalf("result changed: %s then %s", r.Result, r2.Result)
		}
		if r.Error != nil && *r.Error != *r2.Error {
			t.Fatalf("error changed: %+v then %+v", r.Error, r2.Error)
		}
	})
}

// FuzzParseManifest: ParseManifest never panics, rejects only with a
// *abi.ContractError, and a manifest it accepts re-marshals to one that
// parses and resolves the same.
func FuzzParseManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := abi.ParseManifest(b)
		if err != nil {
			var ce *abi.ContractError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is %T, not *abi.ContractError", err, err)
			}
			if m != nil {
				t.Fatalf("rejected manifest returned %+v", m)
			}
			return
		}
		resolved := m.Resolve()
		if len(resolved) == 0 && !m.Offers() {
			t.Fatalf("accepted %q with no tools and no resources or prompts", b)
		}
		names := map[string]bool{}
		for _, tl := range resolved {
			if !abi.ValidToolName(tl.Name) || names[tl.Name] || tl.TimeoutMS <= 0 {
				t.Fatalf("accepted %q with tool %+v", b, tl)
			}
			names[tl.Name] = true
		}
		again := mustMarshal(t, m)
		m2, err := abi.ParseManifest(again)
		if err != nil {
			t.Fatalf("accepted %q, but its re-marshal %s is rejected: %v", b, again, err)
		}
		r1, r2 := mustMarshal(t, resolved), mustMarshal(t, m2.Resolve())
		if !bytes.Equal(r1, r2) {
			t.Fatalf("round trip changed the resolved tools:\n in: %q\n 1st: %s\n 2nd: %s", b, r1, r2)
		}
		if got := mustMarshal(t, m2); !bytes.Equal(got, again) {
			t.Fatalf("round trip changed the manifest:\n 1st: %s\n 2nd: %s", again, got)
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %+v: %v", v, err)
	}
	return b
}

func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return bytes.Equal(mustMarshal(t, va), mustMarshal(t, vb))
}
