package host

import (
	"context"

	"github.com/toolhost/toolhost/internal/guestnote"
)

// withNoteCall returns ctx carrying the notes (toolhost_v1.progress and
// log, imports/toolhostv1) of one call of tool, which reach the Sink ctx
// carries (if any) and the runtime's log.
func (m *Module) withNoteCall(ctx context.Context, tool string) (context.Context, *guestnote.Call) {
	c := guestnote.New(guestnote.Config{Sink: guestnote.SinkFrom(ctx), Logger: m.rt.logger, Module: m.Path, Tool: tool})
	return guestnote.WithCall(ctx, c), c
}

// endNotes sends the progress the rate limit held back, unless the call
// was stopped (nobody awaits its answer), and logs what the limits did.
func endNotes(ctx context.Context, c *guestnote.Call) {
	if ctx.Err() == nil {
		c.Flush()
	}
	c.Report()
}
