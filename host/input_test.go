package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// The C SDK's input requests, through the host: a first call comes back
// as the *abi.InputRequest the guest wrote (checked, state included); a
// call with a resume document in its context reads it through
// toolhost_v1.input and completes.
func TestInputFromCGuest(t *testing.T) {
	checkInputGuest(t, testwasm.C(t, "host/testdata/cinput"), "c.")
}

// The AssemblyScript SDK's, the same way.
func TestInputFromASGuest(t *testing.T) {
	checkInputGuest(t, testwasm.AS(t, "abi/assemblyscript/testdata/input"), "as.")
}

func checkInputGuest(t *testing.T, path, prefix string) {
	rt := newRuntime(t, host.Config{})
	m, err := rt.LoadFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(tool string) *abi.InputRequest {
		t.Helper()
		res, err := m.Call(context.Background(), tool, nil, host.Limits{})
		var ir *abi.InputRequest
		if !errors.As(err, &ir) || res != nil {
			t.Fatalf("%s: %s, %v; want an input request", tool, res, err)
		}
		return ir
	}
	answer := func(tool string, resume abi.InputResume) string {
		t.Helper()
		doc, _ := json.Marshal(resume)
		res, err := m.Call(guestinput.WithResume(context.Background(), doc), tool, nil, host.Limits{})
		if err != nil {
			t.Fatalf("%s answered: %v", tool, err)
		}
		return string(res)
	}
	if q := ask(prefix + "confirm").Requests["confirm"]; q.Mode != abi.InputForm || q.Message != `Delete "it"?` {
		t.Errorf("c.confirm asked %+v", q)
	}
	for _, tc := range []struct {
		a    abi.InputAnswer
		want string
	}{
		{abi.InputAnswer{Action: abi.InputAccept, Content: map[string]any{"confirm": true}}, "true"},
		{abi.InputAnswer{Action: abi.InputAccept, Content: map[string]any{"confirm": false}}, "false"},
		{abi.InputAnswer{Action: abi.InputDecline}, "false"},
	} {
		if got := answer(prefix+"confirm", abi.InputResume{Responses: map[string]abi.InputAnswer{"confirm": tc.a}}); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.a, got, tc.want)
		}
	}
	ir := ask(prefix + "state")
	if ir.State != `step "2"` || ir.Requests["login"].URL != "https://example.com/login" {
		t.Errorf("c.state asked %+v", ir)
	}
	got := answer(prefix+"state", abi.InputResume{State: ir.State, Responses: map[string]abi.InputAnswer{"login": {Action: abi.InputCancel}}})
	if got != `{"action":"cancel","state":"step \"2\""}` {
		t.Errorf("c.state answered %s", got)
	}
}
