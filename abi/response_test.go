package abi_test

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/abi"
)

func TestParseResponseResult(t *testing.T) {
	tests := []struct {
		doc    string
		result string // compacted
	}{
		{`{"result":{"words":3}}`, `{"words":3}`},
		{`{"result":null}`, `null`},
		{`{"result":0}`, `0`},
		{`{"result":""}`, `""`},
		{`{"result":[1,2]}`, `[1,2]`},
		{`{"result":false}`, `false`},
		{` { "result" : { "a" : [ 1 ] } } ` + "\n", `{"a":[1]}`},
		{`{"result":1,"extra":"ignored"}`, `1`},
		{`{"result":"é ✓"}`, `"é ✓"`},
	}
	for _, tt := range tests {
		r, err := abi.ParseResponse([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		if r.Error != nil {
			t.Errorf("%s: Error = %+v", tt.doc, r.Error)
		}
		if r.Result == nil {
			t.Errorf("%s: Result is nil", tt.doc)
			continue
		}
		got, err := json.Marshal(r.Result)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.result {
			t.Errorf("%s: Result = %s, want %s", tt.doc, got, tt.result)
		}
	}
}

func TestParseResponseError(t *testing.T) {
	tests := []struct {
		doc  string
		want abi.Error
	}{
		{`{"error":{"kind":"transient","message":"upstream 429","retry_after_ms":1500}}`,
			abi.Error{Kind: abi.KindTransient, Message: "upstream 429", RetryAfterMS: 1500}},
		{`{"error":{"kind":"transient","message":"busy"}}`, abi.Error{Kind: abi.KindTransient, Message: "busy"}},
		{`{"error":{"kind":"schema","message":"text is required"}}`, abi.Error{Kind: abi.KindSchema, Message: "text is required"}},
		{`{"error":{"kind":"internal","message":"boom","retry_after_ms":0}}`, abi.Error{Kind: abi.KindInternal, Message: "boom"}},
		{`{"error":{"kind":"internal"}}`, abi.Error{Kind: abi.KindInternal}},
	}
	for _, tt := range tests {
		r, err := abi.ParseResponse([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.doc, err)
			continue
		}
		if r.Result != nil {
			t.Errorf("%s: Result = %s", tt.doc, r.Result)
		}
		if r.Error == nil || *r.Error != tt.want {
			t.Errorf("%s: Error = %+v, want %+v", tt.doc, r.Error, tt.want)
		}
	}
}

func TestGuestErrorMessage(t *testing.T) {
	var err error = &abi.Error{Kind: abi.KindSchema, Message: "bad text"}
	if err.Error() != "schema: bad text" {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestParseResponseInvalid(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"both", `{"result":1,"error":{"kind":"internal","message":"x"}}`, "both"},
		{"both, null result", `{"result":null,"error":{"kind":"internal","message":"x"}}`, "both"},
		{"neither", `{}`, "neither"},
		{"neither, other keys", `{"Result":1,"errors":[]}`, "neither"},
		{"bad kind", `{"error":{"kind":"timeout","message":"x"}}`, `"timeout"`},
		{"empty kind", `{"error":{"message":"x"}}`, `kind ""`},
		{"kind case", `{"error":{"kind":"Transient","message":"x"}}`, `"Transient"`},
		{"error null", `{"error":null}`, `kind ""`},
		{"error string", `{"error":"boom"}`, "not an object with kind and message"},
		{"error array", `{"error":[]}`, "not an object with kind and message"},
		{"kind not string", `{"error":{"kind":1,"message":"x"}}`, "not an object with kind and message"},
		{"message not string", `{"error":{"kind":"internal","message":7}}`, "not an object with kind and message"},
		{"retry_after_ms negative", `{"error":{"kind":"transient","message":"x","retry_after_ms":-1}}`, "retry_after_ms is negative"},
		{"retry_after_ms float", `{"error":{"kind":"transient","message":"x","retry_after_ms":1.5}}`, "not an object with kind and message"},
		{"retry_after_ms string", `{"error":{"kind":"transient","message":"x","retry_after_ms":"1"}}`, "not an object with kind and message"},
		{"array", `[{"result":1}]`, "not a JSON object"},
		{"string", `"result"`, "not a JSON object"},
		{"number", `1`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"empty", ``, "not a JSON object"},
		{"whitespace", " \n", "not a JSON object"},
		{"truncated", `{"result":`, "not a JSON object"},
		{"invalid UTF-8", "{\"result\":\"\xff\"}", "not valid UTF-8"},
		{"invalid UTF-8 in message", "{\"error\":{\"kind\":\"internal\",\"message\":\"\xed\xa0\x80\"}}", "not valid UTF-8"},
		{"trailing garbage", `{"result":1}x`, "trailing data"},
		{"trailing object", `{"result":1} {"result":2}`, "trailing data"},
		{"trailing brace", `{"result":1}}`, "trailing data"},
		{"trailing bracket", `{"result":1}]`, "trailing data"},
		{"trailing comma", `{"result":1},`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := abi.ParseResponse([]byte(tt.doc))
			if r.Result != nil || r.Error != nil {
				t.Errorf("got %+v with error %v", r, err)
			}
			contractError(t, err, "response", tt.want)
		})
	}
}
