package guest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

type pathArgs struct {
	Path string `json:"path"`
}

// Confirm asks on the first call (the response is {"input": ...}, a form
// the host accepts) and, on the call that answers, says whether the user
// accepted and checked the box; a request the host would refuse is the
// tool's internal error.
func TestConfirm(t *testing.T) {
	registered := tools
	t.Cleanup(func() { tools, manifest = registered, nil })
	RegisterContext("files.rm", Options{}, func(ctx context.Context, a pathArgs) (string, error) {
		ok, err := Confirm(ctx, "Delete "+a.Path+"?")
		if err != nil {
			return "", err
		}
		if !ok {
			return "kept", nil
		}
		return "deleted", nil
	})
	Register("files.bad", Options{}, func(pathArgs) (string, error) {
		return "", AskURL("login", "Sign in", "ftp://example.com", "")
	})
	args := []byte(`{"path":"/x"}`)
	var first abi.Response
	if err := json.Unmarshal(Dispatch("files.rm", args), &first); err != nil || first.Input == nil {
		t.Fatalf("first call: %+v %v", first, err)
	}
	if q := first.Input.Requests["confirm"]; q.Mode != abi.InputForm || q.Message != "Delete /x?" || abi.CheckInput(first.Input) != nil {
		t.Fatalf("asked %+v", first.Input)
	}
	for _, tc := range []struct {
		answer abi.InputAnswer
		want   string
	}{
		{abi.InputAnswer{Action: abi.InputAccept, Content: map[string]any{"confirm": true}}, `{"result":"deleted"}`},
		{abi.InputAnswer{Action: abi.InputAccept, Content: map[string]any{"confirm": false}}, `{"result":"kept"}`},
		{abi.InputAnswer{Action: abi.InputDecline}, `{"result":"kept"}`},
		{abi.InputAnswer{Action: abi.InputCancel}, `{"result":"kept"}`},
	} {
		got := string(DispatchAnswered("files.rm", args, abi.InputResume{Responses: map[string]abi.InputAnswer{"confirm": tc.answer}}))
		if got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.answer, got, tc.want)
		}
	}
	// The answer is the resumed call's only: the next call asks again.
	if got := string(Dispatch("files.rm", args)); !strings.HasPrefix(got, `{"input":`) {
		t.Errorf("a call after the answered one: %s", got)
	}
	if got := string(Dispatch("files.bad", args)); !strings.Contains(got, `"kind":"internal"`) || !strings.Contains(got, "not an absolute http or https URL") {
		t.Errorf("a bad request: %s", got)
	}
}
