package dispatcher

import (
	"errors"

	"github.com/toolhost/toolhost/abi"
)

// inputRequest returns the input request err carries (the handler's way
// of saying "ask the user first"), or nil.
func inputRequest(err error) *abi.InputRequest {
	if err == nil {
		return nil // without the allocation errors.As costs
	}
	var ir *abi.InputRequest
	if errors.As(err, &ir) {
		return ir
	}
	return nil
}

// Unanswerable is the envelope for a tool that asked for input of a
// caller that has no user to ask (Call's callers, plan steps). The caller
// must call it some other way, so the kind is schema: not retried, not
// held against the tool.
func Unanswerable(tool string, attempts int) *DispatchError {
	return newError(KindSchema, attempts, nil,
		"tool %s needs input from the user (MCP elicitation), which this caller cannot give; call it from an MCP client that supports elicitation", tool)
}
