package reliability_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/toolhost/toolhost/dispatcher"
)

// FuzzDispatchArgs drives arbitrary arguments down the whole call path:
// the dispatcher's schema validation, the host writing them into a fresh
// instance of echo.wat, the guest echoing them back inside its response,
// and the host checking that response. Whatever the bytes, the outcome is
// a result equal to the arguments (when they are a JSON object, or empty)
// or a schema error made before the guest runs; never an internal error,
// a retry, or a panic. The seed corpus is in testdata/fuzz/FuzzDispatchArgs/.
func FuzzDispatchArgs(f *testing.F) {
	r := newRig(f, rigConfig{})
	f.Cleanup(r.close)
	f.Fuzz(func(t *testing.T, args []byte) {
		o := r.call("wat.echo", string(args), dispatcher.Options{})
		if o.Err != nil {
			// Validation refuses before any attempt; the host refuses
			// arguments that are not UTF-8 (which validation lets
			// through) before the guest sees them.
			early := o.Err.Attempts == 0 || (o.Err.Attempts == 1 && !utf8.Valid(args))
			if o.Err.Kind != dispatcher.KindSchema || !early {
				t.Fatalf("args %q: %s after %d attempts: %s; want a schema error before the guest runs",
					args, o.Err.Kind, o.Err.Attempts, o.Err.Message)
			}
			return
		}
		if len(bytes.TrimSpace(args)) == 0 {
			if string(o.Result) != "null" { // echo.wat's answer to no arguments
				t.Fatalf("empty args %q: result %s", args, o.Result)
			}
			return
		}
		in, err := canonical(args)
		if err != nil {
			t.Fatalf("args %q passed validation but are not a JSON object (%v)", args, err)
		}
		out, err := canonical(o.Result)
		if err != nil {
			t.Fatalf("args %q: result %q is not an object: %v", args, o.Result, err)
		}
		if !bytes.Equal(in, out) {
			t.Fatalf("args %q came back as %q", args, o.Result)
		}
	})
}

// canonical re-encodes a JSON object with sorted keys, numbers as written
// (1e700 is a valid JSON number, if not a float64).
func canonical(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, errors.New("null")
	}
	return json.Marshal(v)
}
