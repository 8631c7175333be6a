package plan

import "context"

type stepKey struct{}

// StepOf returns the id of the step a Dispatcher.Call runs, from the
// context the executor calls it with, so that a dispatcher can label the
// step's work (a trace span, say) without a wider interface.
func StepOf(ctx context.Context) (int, bool) {
	id, ok := ctx.Value(stepKey{}).(int)
	return id, ok
}

func withStep(ctx context.Context, id int) context.Context {
	return context.WithValue(ctx, stepKey{}, id)
}
