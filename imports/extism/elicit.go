package extism

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/internal/guestinput"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// createElicitation is hyper-mcp's create_elicitation(params i64) -> i64:
// MCP's elicitation (a form, or a URL to open), which blocks the plugin
// until the user answers. toolhost's input requests are not blocking: a
// tool answers with an *abi.InputRequest, the transport asks the client,
// and the call runs again with the answers. So the n-th
// create_elicitation of a call is request "elicit-n":
//
//   - when the call resumes with its answer, it returns the answer as
//     MCP's ElicitResult JSON {action, content} at once;
//   - otherwise the call stops with an *abi.InputRequest for it, whose
//     state carries the answers so far, so that a plugin that asks twice
//     finds the first answer again when it runs the third time.
//
// A plugin must therefore ask the same questions in the same order when
// it runs again (a plugin that asks in a loop with a changing message
// still works; one that asks at random does not).
func createElicitation(ctx context.Context, k *Kernel, mod api.Module, s []uint64) {
	k.elicits++
	id := fmt.Sprintf("elicit-%d", k.elicits)
	answers := k.resumed(ctx)
	if a, ok := answers[id]; ok {
		b, _ := json.Marshal(a)
		s[0] = k.put(mod, b)
		return
	}
	var p struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		URL             string          `json:"url"`
	}
	if err := json.Unmarshal(k.block(s[0], "create_elicitation"), &p); err != nil {
		k.stop(fmt.Errorf("create_elicitation: not an ElicitRequestParam: %v", err))
	}
	q := abi.InputQuestion{Mode: abi.InputForm, Message: p.Message, Schema: p.RequestedSchema}
	if p.Mode == abi.InputURL {
		q = abi.InputQuestion{Mode: abi.InputURL, Message: p.Message, URL: p.URL}
	}
	state, _ := json.Marshal(answers)
	req := &abi.InputRequest{Requests: map[string]abi.InputQuestion{id: q}, State: string(state)}
	if err := abi.CheckInput(req); err != nil {
		k.stop(fmt.Errorf("create_elicitation: %w", err))
	}
	k.stop(req)
}

// resumed returns the answers the call resumes with: those carried in its
// state (answered in earlier rounds) and the new ones.
func (k *Kernel) resumed(ctx context.Context) map[string]abi.InputAnswer {
	if k.answers != nil {
		return k.answers
	}
	k.answers = map[string]abi.InputAnswer{}
	doc := guestinput.Resume(ctx)
	if doc == nil {
		return k.answers
	}
	var r abi.InputResume
	if err := json.Unmarshal(doc, &r); err != nil {
		k.stop(fmt.Errorf("create_elicitation: the answers are not an InputResume: %v", err))
	}
	if r.State != "" {
		// The host signed the state it handed out: it is ours.
		_ = json.Unmarshal([]byte(r.State), &k.answers)
	}
	for id, a := range r.Responses {
		k.answers[id] = a
	}
	return k.answers
}
