package abi

import (
	"errors"
	"strings"
	"testing"
)

func TestParseInputResponse(t *testing.T) {
	form := `{"mode":"form","message":"Sure?","schema":{"type":"object","properties":{"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}}`
	r, err := ParseResponse([]byte(`{"input":{"requests":{"confirm":` + form + `,"login":{"mode":"url","message":"Sign in","url":"https://example.com/x"}},"state":"s"}}`))
	if err != nil || r.Input == nil || r.Input.State != "s" || len(r.Input.Requests) != 2 || r.Result != nil || r.Error != nil {
		t.Fatalf("got %+v, %v", r, err)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"input":{"requests":{"c":` + form + `}},"result":1}`, `"input" beside`},
		{`{"input":{"requests":{}}}`, "no requests"},
		{`{"input":{"requests":{"a":` + form + `,"b":` + form + `,"c":` + form + `,"d":` + form + `,"e":` + form + `}}}`, "more than 4"},
		{`{"input":{"requests":{"c":` + form + `},"state":"` + strings.Repeat("x", MaxInputStateBytes+1) + `"}}`, "state is"},
		{`{"input":{"requests":{"bad id":` + form + `}}}`, "does not match"},
		{`{"input":{"requests":{"c":{"mode":"form","message":"m","schema":{"type":"object","properties":{"o":{"type":"object"}}}}}}}`, "must be a string, number"},
		{`{"input":{"requests":{"c":{"mode":"form","message":"m","schema":{"type":"array"}}}}}`, `"type": "object"`},
		{`{"input":{"requests":{"c":{"mode":"url","message":"m","url":"javascript:alert(1)"}}}}`, "not an absolute http"},
		{`{"input":{"requests":{"c":{"mode":"chat","message":"m"}}}}`, "mode"},
		{`{"input":{"requests":{"c":{"mode":"url","message":"m","url":"https:///path"}}}}`, "not an absolute http"},
		{`{"input":{"requests":{"c":{"mode":"url","message":"m","url":"https://a b/"}}}}`, "not an absolute http"},
		{`{"input":{"requests":{"c":{"mode":"url","message":"m","url":"https://user@/x"}}}}`, "not an absolute http"},
		{`{"input":{"requests":{"c":{"mode":"form","message":"","schema":{"type":"object"}}}}}`, "message must be"},
		{`{"input":"yes"}`, "not an object"},
	} {
		_, err := ParseResponse([]byte(tc.doc))
		var ce *ContractError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.80s: %v; want a contract error saying %q", tc.doc, err, tc.want)
		}
	}
}
