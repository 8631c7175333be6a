package abi_test

import (
	"fmt"

	"github.com/toolhost/toolhost/abi"
)

// Module-level timeout_ms, idempotent and read_only are defaults that each
// tool inherits unless it sets its own.
func ExampleParseManifest() {
	m, err := abi.ParseManifest([]byte(`{
	  "abi": 1,
	  "timeout_ms": 5000,
	  "read_only": true,
	  "tools": [
	    {"name": "hash.sha256", "input_schema": {"type": "object"}, "idempotent": true},
	    {"name": "hash.slow", "input_schema": {"type": "object"}, "timeout_ms": 60000, "read_only": false}
	  ]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range m.Resolve() {
		fmt.Printf("%s timeout_ms=%d idempotent=%t read_only=%t\n", t.Name, t.TimeoutMS, t.Idempotent, t.ReadOnly)
	}

	_, err = abi.ParseManifest([]byte(`{"abi": 2, "tools": []}`))
	fmt.Println(err)
	// Output:
	// hash.sha256 timeout_ms=5000 idempotent=true read_only=true
	// hash.slow timeout_ms=60000 idempotent=false read_only=false
	// manifest: abi is 2, this host speaks 1
}

func ExampleParseResponse() {
	for _, doc := range []string{
		`{"result": {"words": 3}}`,
		`{"error": {"kind": "transient", "message": "upstream 429", "retry_after_ms": 1500}}`,
		`{"result": 1, "error": {"kind": "internal", "message": "x"}}`,
	} {
		r, err := abi.ParseResponse([]byte(doc))
		switch {
		case err != nil:
			fmt.Println("invalid:", err)
		case r.Error != nil:
			fmt.Printf("error: %v (retry after %d ms)\n", r.Error, r.Error.RetryAfterMS)
		default:
			fmt.Printf("result: %s\n", r.Result)
		}
	}
	// Output:
	// result: {"words": 3}
	// error: transient: upstream 429 (retry after 1500 ms)
	// invalid: response: has both "result" and "error"
}
