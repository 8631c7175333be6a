package host

import (
	"context"
	"strings"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/internal/guestnote"
	"github.com/toolhost/toolhost/third_party/wazero"
)

// withNoteCall returns ctx carrying the notes (toolhost_v1.progress and
// log, served by imports/toolhostv1) of one call of tool, which reach the
// Sink ctx carries (if any) and the runtime's log. A module that imports
// neither gets nil and pays nothing for them.
func (m *Module) withNoteCall(ctx context.Context, tool string) (context.Context, *guestnote.Call) {
	if !m.notes {
		return ctx, nil
	}
	c := guestnote.New(guestnote.Config{Sink: guestnote.SinkFrom(ctx), Logger: m.rt.logger, Module: m.Path, Tool: tool})
	return guestnote.WithCall(ctx, c), c
}

// endNotes sends the progress the rate limit held back, unless the call
// was stopped (nobody awaits its answer), and logs what the limits did.
func endNotes(ctx context.Context, c *guestnote.Call) {
	if c == nil {
		return
	}
	if ctx.Err() == nil {
		c.Flush()
	}
	c.Report()
}

// importsNotes reports whether a module imports progress or log.
func importsNotes(c wazero.CompiledModule) bool {
	for _, imp := range c.ImportedFunctions() {
		mod, name, _ := imp.Import()
		switch {
		case mod == abi.ImportModule && (name == abi.ImportProgress || name == abi.ImportLog),
			mod == extism.EnvModule && strings.HasPrefix(name, "log_"), // Extism's logs
			mod == extism.UserModule:                                   // hyper-mcp's notifications
			return true
		}
	}
	return false
}
