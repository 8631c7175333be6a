package main

import (
	"context"
	"log/slog"
	"slices"

	"github.com/toolhost/toolhost/plan"
)

// busLogger is the logger the event bus writes every event to. Plan events
// carry step arguments and results, which may hold secrets; like argument
// values in the audit log, they reach the log only with --audit-args.
func busLogger(logger *slog.Logger, auditArgs bool) *slog.Logger {
	if auditArgs {
		return logger
	}
	return slog.New(withoutArgs{logger.Handler()})
}

// withoutArgs drops arguments and results from the plan events it logs.
type withoutArgs struct{ slog.Handler }

func (h withoutArgs) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h withoutArgs) WithAttrs(attrs []slog.Attr) slog.Handler {
	for i, a := range attrs {
		attrs[i] = redactAttr(a)
	}
	return withoutArgs{h.Handler.WithAttrs(attrs)}
}

func (h withoutArgs) WithGroup(name string) slog.Handler {
	return withoutArgs{h.Handler.WithGroup(name)}
}

func redactAttr(a slog.Attr) slog.Attr {
	switch e := a.Value.Any().(type) {
	case plan.Event:
		return slog.Any(a.Key, eventWithoutArgs(e))
	case *plan.Event:
		if e != nil {
			return slog.Any(a.Key, eventWithoutArgs(*e))
		}
	}
	return a
}

func eventWithoutArgs(e plan.Event) plan.Event {
	e.Args, e.Result = nil, nil
	if len(e.Steps) > 0 {
		e.Steps = slices.Clone(e.Steps)
		for i := range e.Steps {
			e.Steps[i].Args, e.Steps[i].Result = nil, nil
		}
	}
	return e
}
