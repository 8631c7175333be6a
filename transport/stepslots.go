package transport

import (
	"context"

	"github.com/toolhost/toolhost/dispatcher"
)

// stepSlots places a plan's steps in its caller's cap (finding 10.9: a
// plan must not run more calls at once than its caller may). The plan
// call already holds one place; it lends that place to its steps, so
// one step can always run and a plan never deadlocks against its own
// place. Every further step in flight takes a place of its own, and when
// the caller has none free it waits for one (until the plan's context
// ends) rather than failing: the plan asked for parallelism the cap does
// not allow, and runs as much of it as the cap does.
type stepSlots struct {
	lim    *callerLimit
	caller string
	own    chan struct{} // holds the plan call's place while no step uses it
}

func newStepSlots(lim *callerLimit, caller string) *stepSlots {
	own := make(chan struct{}, 1)
	own <- struct{}{}
	return &stepSlots{lim: lim, caller: caller, own: own}
}

// take returns once the step has a place, with the function that gives
// it back, or an envelope when ctx ended first (rate_limited: the step
// never ran). max is the cap, for the message.
func (ss *stepSlots) take(ctx context.Context, max int) (func(), *dispatcher.DispatchError) {
	for {
		select {
		case <-ss.own:
			return func() { ss.own <- struct{}{} }, nil
		default:
		}
		ok, freed := ss.lim.take(ss.caller)
		if ok {
			return func() { ss.lim.exit(ss.caller) }, nil
		}
		select {
		case <-ss.own:
			return func() { ss.own <- struct{}{} }, nil
		case <-freed:
		case <-ctx.Done():
			return nil, refusal(dispatcher.KindRateLimited,
				"caller %q had %d calls in flight, this server's limit per caller, until the plan ended (%v); the step did not run",
				ss.caller, max, context.Cause(ctx))
		}
	}
}
