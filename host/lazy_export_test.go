package host

import (
	"context"
	"encoding/json"
)

// ResumDescribeEntry recomputes a describe cache entry's sum after a test
// edits it: a well-formed entry that lies.
func ResumDescribeEntry(b []byte) ([]byte, error) {
	var e describeEntry
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, err
	}
	e.Sum = e.sum()
	return json.Marshal(&e)
}

// TakeSlot takes one of the runtime's fresh-instance slots, as a call
// does, until the returned func gives it back.
func (r *Runtime) TakeSlot(ctx context.Context) (func(), error) {
	if err := r.admit.enter(ctx); err != nil {
		return nil, err
	}
	return r.admit.leave, nil
}

// WaitBackground waits for the compiles the runtime started in the
// background (Config.WarmUp) and on demand so far.
func (r *Runtime) WaitBackground() { r.residents.Wait(); r.interp.retiring.Wait() }

// Interpreting reports whether m has an interpreted form now
// (Config.Interpret).
func (m *Module) Interpreting() bool {
	m.interpMu.Lock()
	defer m.interpMu.Unlock()
	return m.interp != nil
}

// BeforeForm has h run as each interpreted form starts to be made
// (Config.Interpret). Set it before the runtime's first call.
func (r *Runtime) BeforeForm(h func()) { r.interp.beforeForm = h }

// Recompile compiles the module from its file as a call on demand does.
func (m *Module) Recompile(ctx context.Context) error {
	c, err := m.recompile(ctx)
	if err == nil {
		_ = c.Close(ctx)
	}
	return err
}
