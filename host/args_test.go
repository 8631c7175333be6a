package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
)

// TestCallArgsContract: the host gives the guest what the ABI promises,
// a JSON object or nothing, whatever reached it. Found by the reliability
// suite's FuzzDispatchArgs: schema validation reads invalid UTF-8
// leniently, so such arguments reached echo.wat, came back in its
// response, and failed the call as the tool's internal error.
func TestCallArgsContract(t *testing.T) {
	_, _, echo := sharedRuntime(t)
	ctx := context.Background()
	for _, args := range []string{"", " ", " \n\t\r "} {
		res, err := echo.Call(ctx, "wat.echo", []byte(args), host.Limits{})
		if err != nil || string(res) != "null" {
			t.Errorf("args %q = %s, %v; want null (echo.wat's answer to no arguments)", args, res, err)
		}
	}
	for _, args := range []string{"{\"t\":\"\xff\"}", "{\"t\":\"\xc0\xaf\"}", "\xef\xbb"} {
		res, err := echo.Call(ctx, "wat.echo", []byte(args), host.Limits{})
		var ge *abi.Error
		if !errors.As(err, &ge) || ge.Kind != abi.KindSchema {
			t.Errorf("args %q = %s, %v; want a schema error", args, res, err)
		}
	}
}
