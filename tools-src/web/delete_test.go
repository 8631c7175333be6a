package main

import (
	"strings"
	"testing"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// web.delete asks before anything else, and a declined answer sends
// nothing (natively there is no host to send through: a DELETE would
// fail the call).
func TestDeleteAsksFirst(t *testing.T) {
	args := []byte(`{"url":"https://api.example.com/items/7"}`)
	first := string(guest.Dispatch("web.delete", args))
	if !strings.HasPrefix(first, `{"input":`) || !strings.Contains(first, "DELETE to https://api.example.com/items/7") {
		t.Fatalf("first call: %s", first)
	}
	for _, a := range []abi.InputAnswer{{Action: abi.InputDecline}, {Action: abi.InputCancel},
		{Action: abi.InputAccept, Content: map[string]any{"confirm": false}}} {
		got := string(guest.DispatchAnswered("web.delete", args, abi.InputResume{Responses: map[string]abi.InputAnswer{"confirm": a}}))
		if got != `{"result":{"deleted":false,"note":"the user did not confirm; nothing was sent"}}` {
			t.Errorf("%+v: %s", a, got)
		}
	}
	if got := string(guest.Dispatch("web.delete", []byte(`{"url":"http://x.example/a"}`))); !strings.Contains(got, `"kind":"schema"`) {
		t.Errorf("an http URL: %s", got)
	}
}
