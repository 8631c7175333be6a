package dispatcher

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/idempotency"
)

// OutcomeErrors is the idempotency.ErrorCodec for the dispatcher's
// outcomes: a *DispatchError as its wire JSON, so that a replica replaying
// another's outcome answers with the same envelope; a tool's input request
// (passed to a keyed execution's waiters, never kept) as itself, under
// "input_request".
var OutcomeErrors idempotency.ErrorCodec = outcomeErrors{}

type outcomeErrors struct{}

// sharedInput is how an input request travels between replicas.
type sharedInput struct {
	Input *abi.InputRequest `json:"input_request"`
}

func (outcomeErrors) EncodeError(err error) ([]byte, error) {
	if ir := inputRequest(err); ir != nil {
		return json.Marshal(sharedInput{ir})
	}
	var de *DispatchError
	if !errors.As(err, &de) {
		de = newError(KindInternal, 0, err, "%v", err)
	}
	return json.Marshal(de)
}

func (outcomeErrors) DecodeError(b []byte) (error, error) {
	var in sharedInput
	if json.Unmarshal(b, &in) == nil && in.Input != nil {
		return in.Input, nil
	}
	var de DispatchError
	if err := json.Unmarshal(b, &de); err != nil {
		return nil, err
	}
	if de.Kind == "" {
		return nil, fmt.Errorf("a kept error has no kind: %s", b)
	}
	return &de, nil
}

// storeUnavailable is the envelope for a keyed call whose idempotency store
// cannot answer (Redis unreachable or slow): the call did not run, since
// it would run without the deduplication it asked for; it is transient,
// so the caller may call again.
func storeUnavailable(err error) *DispatchError {
	return newError(KindTransient, 0, err, "%v; the call did not run (a keyed call never runs without its deduplication); call again shortly", err)
}

// envelopeOf is a stored outcome's error as an envelope: the
// dispatcher's own, or, from a store that kept only a message, internal.
func envelopeOf(err error) *DispatchError {
	var de *DispatchError
	if errors.As(err, &de) {
		return de
	}
	return newError(KindInternal, 0, err, "%v", err)
}
