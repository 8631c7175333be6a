package dispatcher

import (
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/registry"
)

// dispatch is one call's state on its way through the policies, so that
// the core loop's steps share it instead of passing it along.
type dispatch struct {
	d *Dispatcher
	c Call
	// tool is the version serving the call; the retry loop moves it on
	// when a hot reload replaced it between attempts.
	tool *registry.Tool
	// start and breaker are set when the execution starts: a keyed call
	// that only waits for another's execution has neither.
	start   time.Time
	breaker *breaker.Breaker
	// input is what the last attempt's tool asked the user (see
	// abi.InputRequest): the call's answer, not a failure.
	input *abi.InputRequest
}
