package guest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Input requests: a tool that needs the user's answer before it can go on
// returns Ask(...) as its error. The host asks the user through the MCP
// client (elicitation) and calls the tool again with the same arguments;
// in that call Answers returns the answers and the state the tool kept.
// The state is signed by the host, so the client cannot forge it or use
// it for another tool, caller or arguments; it is not encrypted, so keep
// no secrets in it.
//
//	func remove(ctx context.Context, a Args) (Result, error) {
//		ok, err := guest.Confirm(ctx, "Delete "+a.Path+"?")
//		if err != nil || !ok {
//			return Result{Deleted: false}, err // err asks; !ok: declined
//		}
//		...
//	}
//
// A client that cannot be asked gets an error saying so; the tool is not
// called again.

// InputNeeded is the error Ask returns: the SDK turns it into the
// response {"input": Request} rather than an error.
type InputNeeded struct {
	Request abi.InputRequest
}

// Error says what the value stands for; the SDK never sends it as an
// error message.
func (e *InputNeeded) Error() string { return "the tool needs input from the user" }

// Ask returns the error that makes the call ask the user req's questions.
// Return it from the tool as is.
func Ask(req abi.InputRequest) error { return &InputNeeded{Request: req} }

// AskForm asks one form question under id: schema is a JSON Schema object
// of primitive properties (string, number, integer, boolean, or an array
// of enumerated strings); state comes back with the answer.
func AskForm(id, message string, schema json.RawMessage, state string) error {
	return Ask(abi.InputRequest{State: state, Requests: map[string]abi.InputQuestion{
		id: {Mode: abi.InputForm, Message: message, Schema: schema}}})
}

// AskURL asks the user to open url (a sign-in, a payment) and come back.
func AskURL(id, message, url, state string) error {
	return Ask(abi.InputRequest{State: state, Requests: map[string]abi.InputQuestion{
		id: {Mode: abi.InputURL, Message: message, URL: url}}})
}

// Answers returns the user's answers and the tool's state when this call
// answers the tool's own input request; false otherwise (a first call).
func Answers(ctx context.Context) (abi.InputResume, bool) {
	if !live(ctx) {
		return abi.InputResume{}, false
	}
	c := current
	if !c.inputRead {
		c.inputRead = true
		if doc := hostInput(); len(doc) > 0 {
			var r abi.InputResume
			if json.Unmarshal(doc, &r) == nil {
				c.input = &r
			}
		}
	}
	if c.input == nil {
		return abi.InputResume{}, false
	}
	return *c.input, true
}

// confirmSchema is Confirm's form: one required checkbox.
const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm","description":"Check to go ahead"}},"required":["confirm"]}`

// Confirm asks the user to confirm message: on the first call it returns
// the error that asks (return it); on the call that answers, true when the
// user accepted and checked confirm, false when they declined, cancelled
// or left it unchecked.
func Confirm(ctx context.Context, message string) (bool, error) {
	r, ok := Answers(ctx)
	if !ok {
		return false, AskForm("confirm", message, json.RawMessage(confirmSchema), "")
	}
	a, ok := r.Responses["confirm"]
	if !ok {
		return false, errors.New("guest.Confirm: the answer has no \"confirm\" response")
	}
	yes, _ := a.Content["confirm"].(bool)
	return a.Action == abi.InputAccept && yes, nil
}

// DispatchAnswered is Dispatch for a call that answers an input request,
// for native tests: Answers returns resume during the call.
func DispatchAnswered(name string, args []byte, resume abi.InputResume) []byte {
	doc, err := json.Marshal(resume)
	if err != nil {
		panic(fmt.Sprintf("guest.DispatchAnswered: %v", err))
	}
	saved := hostInput
	hostInput = func() []byte { return doc }
	defer func() { hostInput = saved }()
	return Dispatch(name, args)
}

// hostInput reads the call's resume document from the host; tests
// replace it.
var hostInput = importedInput
