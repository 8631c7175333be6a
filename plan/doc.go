// Package plan is toolhost's plan executor: plan → execute → replan.
//
// A Planner turns (goal, history, last_error) into steps. The Executor runs
// the steps through a Dispatcher (so timeouts, retries and idempotency apply
// to each step unchanged) and, when a step fails in a way a new plan can
// route around, asks the planner again from where the plan stopped. Two
// budgets keep a session finite: MaxSteps counts every executed step, failed
// ones too, and MaxReplans counts planner calls after the first.
//
// Every state change is an Event in one log; the SessionResult is a fold
// over that log (Fold), and so is the executor's own view of the session:
// a consumer of the log (an --events file, MCP progress notifications)
// can rebuild exactly the result the executor returned.
//
// Steps refer to earlier results with typed references: an argument value
// {"$ref": "/steps/2/result/words"} is replaced, before dispatch, by the
// value that JSON Pointer names in step 2's result. References, and an
// optional depends_on list, are also the dependency graph: with MaxParallel
// above 1, ready steps are dispatched eagerly, in id order, at most
// MaxParallel at once.
//
// See docs/PLAN.md for the event log, the error-kind table and the plan
// file format.
package plan
