package plan

// Redacted returns e without the values a caller sent or a tool returned:
// step arguments (resolved, or as the planner gave them) and results. The
// bus publishes this form unless the operator asked for values
// (events.Options.Values, serve --audit-args): arguments may hold secrets,
// and the bus writes to the log as well as to subscribers. The session's
// own log (Observe, SessionResult) keeps everything.
func (e Event) Redacted() any {
	e.Args, e.Result = nil, nil
	if e.Steps != nil {
		steps := make([]Step, len(e.Steps))
		for i, s := range e.Steps {
			s.Args, s.Result = nil, nil
			steps[i] = s
		}
		e.Steps = steps
	}
	return e
}
