package transport

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// properCode returns the error a response may carry on the wire: err
// itself when it is a JSON-RPC error with a code, else a JSON-RPC error
// with err's message and the code JSON-RPC names for it. The SDK writes
// any other error with code 0, which is no JSON-RPC code at all (clients
// reject the answer or misread it): its refusals of a request out of its
// session's order ("duplicate \"initialize\" received", "method … is
// invalid during session initialization") are -32600 invalid request,
// everything else -32603 internal error.
func properCode(err error) error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != 0 {
		if we == err {
			return err
		}
		// The SDK keeps a wrapped error's code and the outer message.
		return &jsonrpc.Error{Code: we.Code, Message: err.Error(), Data: we.Data}
	}
	out := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	if we != nil {
		out.Data = we.Data
	}
	if msg := out.Message; strings.HasPrefix(msg, "duplicate ") || strings.Contains(msg, "invalid during session initialization") {
		out.Code = jsonrpc.CodeInvalidRequest
	}
	return out
}

// withProperCode is msg with properCode applied to a response's error.
func withProperCode(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil {
		return msg
	}
	if fixed := properCode(resp.Error); fixed != resp.Error {
		r := *resp
		r.Error = fixed
		return &r
	}
	return msg
}

// properErrors gives every error a method handler returns a JSON-RPC code
// (properCode), on every transport: an HTTP answer is written by the SDK
// with no hook of ours in between.
func properErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			err = properCode(err)
		}
		return res, err
	}
}
