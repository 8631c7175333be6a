package transport

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func TestClassifyID(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want idVerdict
	}{
		{`1`, idKeep}, {`-1`, idKeep}, {`0`, idKeep}, {`9007199254740992`, idKeep}, {`-9007199254740992`, idKeep},
		{`"x"`, idKeep}, {`""`, idKeep}, {`"toolhost-int-id"`, idKeep},
		{`9007199254740993`, idRewrite}, {`-9007199254740993`, idRewrite},
		{`9223372036854775807`, idRewrite}, {`-9223372036854775808`, idRewrite},
		{`9223372036854775808`, idRefuse}, {`-9223372036854775809`, idRefuse},
		{`1.5`, idRefuse}, {`1.0`, idRefuse}, {`1e300`, idRefuse}, {`1E2`, idRefuse}, {`-0.0`, idRefuse}, {`-0`, idRewrite},
		{`{"a":1}`, idRefuse}, {`[1]`, idRefuse}, {`true`, idRefuse}, {`false`, idRefuse},
		{`"toolhost-int-id:5"`, idRefuse},
	} {
		if got, why := classifyID(json.RawMessage(tc.id)); got != tc.want {
			t.Errorf("classifyID(%s) = %d (%s), want %d", tc.id, got, why, tc.want)
		}
	}
}

// FuzzClassifyID: an id let through unchanged survives the SDK's float64
// decoding exactly, and a rewritten one is an integer that would not.
func FuzzClassifyID(f *testing.F) {
	for _, s := range []string{`1`, `9007199254740993`, `1.5`, `"a"`, `1e3`, `-0`, `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if !json.Valid([]byte(id)) {
			return
		}
		v, _ := classifyID(json.RawMessage(id))
		id = strings.TrimSpace(id) // JSON's whitespace (the front's ids have none)
		var x any
		_ = json.Unmarshal([]byte(id), &x)
		n, isNum := x.(float64)
		switch v {
		case idKeep:
			if isNum {
				// What the SDK does: float64 → int64, re-encoded.
				if got := strconv.FormatInt(int64(n), 10); got != id {
					t.Errorf("kept %s, but the SDK echoes %s", id, got)
				}
			} else if _, ok := x.(string); !ok {
				t.Errorf("kept %s, neither string nor integer", id)
			}
		case idRewrite:
			if _, err := strconv.ParseInt(id, 10, 64); err != nil {
				t.Errorf("rewrote %s, not an int64 literal: %v", id, err)
			}
		}
	})
}
