package host

import (
	"context"
	"crypto/sha256"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// Planner is a planner module: WebAssembly exporting toolhost_plan (see
// abi.ExportPlan), sandboxed exactly like a tool. It is immutable and safe
// for concurrent use: every Plan call gets a fresh instance under the
// runtime's limits.
type Planner struct {
	m *Module
}

// plannerExports are the functions a planner module must export.
var plannerExports = []export{
	{abi.ExportABIVersion, nil, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportAlloc, []api.ValueType{api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}},
	{abi.ExportPlan, []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI64}},
}

// LoadPlannerFile reads and loads a planner module file. See LoadPlanner.
func (r *Runtime) LoadPlannerFile(ctx context.Context, path string) (*Planner, error) {
	wasm, err := ReadModuleFile(path)
	if err != nil {
		return nil, &LoadError{Path: path, Reason: "cannot read: " + err.Error(), Err: err}
	}
	return r.LoadPlanner(ctx, path, wasm)
}

// LoadPlanner compiles wasm (or takes it from the cache), checks its
// imports and exports against the planner ABI and checks its ABI version in
// a fresh instance bounded by Config.DescribeTimeout. Every failure is a
// *LoadError naming path.
func (r *Runtime) LoadPlanner(ctx context.Context, path string, wasm []byte) (*Planner, error) {
	m, err := r.compile(ctx, path, wasm, sha256.Sum256(wasm), plannerExports, "not a planner: ")
	if err != nil {
		return nil, err
	}
	if err := m.atLoad(ctx, nil); err != nil {
		_ = m.Close(ctx)
		return nil, &LoadError{Path: path, Reason: err.Error(), Err: err}
	}
	return &Planner{m: m}, nil
}

// Path is the file the planner came from.
func (p *Planner) Path() string { return p.m.Path }

// SHA256 is the hex digest of the planner's bytes: its identity.
func (p *Planner) SHA256() string { return p.m.SHA256 }

// Plan runs toolhost_plan on input (the planner input JSON) in a fresh
// instance and returns the output bytes as the guest wrote them; reading
// them as a plan is the caller's business. The instance gets the runtime's
// limits, and the egress the operator granted the module's file name.
//
// The error is one of: an error wrapping ctx's error when ctx ended first
// (the instance is stopped), or a *Fault when the guest trapped, exited,
// or broke the ABI (an output pointer outside its memory, output over the
// output cap). Plan never panics on guest behaviour.
func (p *Planner) Plan(ctx context.Context, input []byte) ([]byte, error) {
	const who = "planner"
	m := p.m
	lim := m.rt.cfg.Limits
	ctx = toolhostv1.WithCall(ctx, m.rt.grants.Call(moduleName(m.Path)))
	out := &capWriter{limit: lim.LogBytes}
	defer m.logOutput(who, out)

	inst, err := m.instantiate(ctx, lim, out)
	if err != nil {
		return nil, m.fault(ctx, who, "instantiating", err, out)
	}
	defer inst.close()
	ptr, err := inst.write(ctx, inst.mod.ExportedFunction(abi.ExportAlloc), input)
	if err != nil {
		return nil, m.fault(ctx, who, "passing the input", err, out)
	}
	res, err := inst.mod.ExportedFunction(abi.ExportPlan).Call(ctx, uint64(ptr), uint64(len(input)))
	if err != nil {
		return nil, m.fault(ctx, who, abi.ExportPlan, err, out)
	}
	b, err := inst.read(res[0], lim.OutputBytes)
	if err != nil {
		return nil, &Fault{Module: m.Path, Tool: who, Reason: abi.ExportPlan + " " + err.Error()}
	}
	return b, nil
}

// Close releases the compiled code. Calls in flight may fail.
func (p *Planner) Close(ctx context.Context) error {
	return p.m.Close(ctx)
}
