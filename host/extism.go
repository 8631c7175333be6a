package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/extism"
	"github.com/toolhost/toolhost/internal/attempt"
	"github.com/toolhost/toolhost/third_party/wazero"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// extismPlugin marks a module that imports extism:host/env: an Extism
// plugin, described and called through one of hyper-mcp's interfaces
// (docs/WRITING-EXTISM.md) instead of toolhost_describe and
// toolhost_call. Everything else — instances, limits, deadlines, warm
// pools, egress — is a tool module's.
type extismPlugin struct {
	iface extism.Interface
	// ctors: the plugin is a WASI command (TinyGo's default, for one),
	// whose __wasm_call_ctors each instance runs once before its first
	// call, as Extism does; its _start is never called.
	ctors bool
}

// wasmCallCtors is a WASI command's constructors, which a reactor's
// _initialize would run.
const wasmCallCtors = "__wasm_call_ctors"

// ExtismInterface names the hyper-mcp interface an Extism plugin is
// served through ("hyper-mcp v2"), or "" for a toolhost ABI module.
func (m *Module) ExtismInterface() string {
	if m.ext == nil {
		return ""
	}
	return fmt.Sprintf("hyper-mcp v%d", m.ext.iface.Version)
}

// extismShape returns the module's Extism plugin shape, nil when it
// imports nothing of Extism's, or why it cannot be served.
func extismShape(c wazero.CompiledModule) (*extismPlugin, string) {
	is := false
	for _, imp := range c.ImportedFunctions() {
		mod, name, _ := imp.Import()
		if !extism.Provides(mod) {
			continue
		}
		is = true
		params, results, ok := extism.Signature(mod, name)
		if !ok {
			return nil, fmt.Sprintf("is an Extism plugin importing %s.%s, which toolhost does not provide", mod, name)
		}
		if !slices.Equal(imp.ParamTypes(), params) || !slices.Equal(imp.ResultTypes(), results) {
			return nil, fmt.Sprintf("imports %s.%s with signature %s, want %s", mod, name,
				signature(imp.ParamTypes(), imp.ResultTypes()), signature(params, results))
		}
	}
	if !is {
		return nil, ""
	}
	fns := c.ExportedFunctions()
	iface, ok := extism.Detect(func(name string) bool {
		def, ok := fns[name]
		return ok && len(def.ParamTypes()) == 0 && len(def.ResultTypes()) == 1 && def.ResultTypes()[0] == api.ValueTypeI32
	})
	if !ok {
		return nil, "is an Extism plugin without hyper-mcp's interface: it must export list_tools and call_tool (v2) or describe and call (v1), each () -> i32"
	}
	ctors := false
	if def, ok := fns[wasmCallCtors]; ok && len(def.ParamTypes()) == 0 && len(def.ResultTypes()) == 0 {
		_, reactor := fns[abi.ExportInitialize]
		ctors = !reactor
	}
	return &extismPlugin{iface: iface, ctors: ctors}, ""
}

// extismFromEntry is the plugin shape a describe cache entry records
// (version 0: none).
func extismFromEntry(version int, ctors bool) *extismPlugin {
	switch version {
	case extism.V1.Version:
		return &extismPlugin{iface: extism.V1, ctors: ctors}
	case extism.V2.Version:
		return &extismPlugin{iface: extism.V2, ctors: ctors}
	}
	return nil
}

// sameExtism reports whether a and b are the same plugin shape (both nil:
// neither is a plugin).
func sameExtism(a, b *extismPlugin) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// describeExtism lists the plugin's tools with its List export, in one
// fresh instance under the describe deadline, and returns them as a
// toolhost manifest.
func (m *Module) describeExtism(ctx context.Context) (*abi.Manifest, []byte, error) {
	var manifest *abi.Manifest
	var raw []byte
	err := m.atLoad(ctx, func(ctx context.Context, inst *instance) error {
		lim := m.rt.cfg.Limits
		list := func(export string) ([]byte, error) {
			out, err := m.runExtism(ctx, inst, export, m.ext.iface.ListInput(), lim)
			if err != nil {
				return nil, m.loadFault(ctx, export, err)
			}
			return out, nil
		}
		out, err := list(m.ext.iface.List)
		if err != nil {
			return err
		}
		var offers extism.Offers
		if m.ext.iface.Version == 2 {
			for export, dst := range map[string]*[]byte{extism.ExportListResources: &offers.Resources,
				extism.ExportListResourceTemplates: &offers.ResourceTemplates, extism.ExportListPrompts: &offers.Prompts} {
				if inst.mod.ExportedFunction(export) == nil {
					continue
				}
				if *dst, err = list(export); err != nil {
					return err
				}
			}
		}
		if raw, err = extism.Manifest(out, offers); err != nil {
			return fmt.Errorf("%s: %w", m.ext.iface.List, err)
		}
		manifest, err = abi.ParseManifest(raw)
		return err
	})
	return manifest, raw, err
}

// invokeExtism runs one call of tool through the plugin's Call export, or
// a read of a resource or a get of a prompt (abi.CallReadResource,
// abi.CallGetPrompt) through read_resource or get_prompt.
func (m *Module) invokeExtism(ctx context.Context, inst *instance, tool string, args []byte, lim Limits, out *capWriter) ([]byte, error) {
	export, input, offer := m.ext.iface.OfferCall(tool, args)
	if !offer {
		export, input = m.ext.iface.Call, m.ext.iface.CallInput(tool, args)
	} else if m.ext.iface.Version != 2 || inst.mod.ExportedFunction(export) == nil {
		return nil, &Fault{Module: m.Path, Tool: tool, Reason: "the plugin does not export " + export}
	}
	started := time.Now()
	if deadline, ok := ctx.Deadline(); ok {
		defer m.rt.kick.Remove(m.rt.kick.Add(deadline))
	}
	res, err := m.runExtism(ctx, inst, export, input, lim)
	attempt.From(ctx).AddGuest(time.Since(started))
	var ae *abi.Error
	var ir *abi.InputRequest
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, m.fault(ctx, tool, export, err, out)
	case errors.As(err, &ae):
		return nil, ae
	case errors.As(err, &ir):
		return nil, ir
	default:
		return nil, m.fault(ctx, tool, export, err, out)
	}
	if offer {
		// MCP's ReadResourceResult and GetPromptResult are toolhost's results.
		if !json.Valid(res) {
			return nil, &Fault{Module: m.Path, Tool: tool, Reason: export + " set output that is not JSON"}
		}
		return res, nil
	}
	result, err := extism.Result(res)
	if errors.As(err, &ae) {
		return nil, ae
	}
	if err != nil {
		return nil, &Fault{Module: m.Path, Tool: tool, Reason: export + ": " + err.Error(), Err: err}
	}
	return result, nil
}

// runExtism calls export in inst with input through the instance's
// kernel (made on first use and kept with the instance, vars and all)
// and returns the plugin's output. A plugin that returned non-zero (with
// error_set's message, if any) fails with an *abi.Error (internal); so does a
// refused or failed http_request (transient when the upstream, not the
// host, failed it). Any other failure is wazero's error.
func (m *Module) runExtism(ctx context.Context, inst *instance, export string, input []byte, lim Limits) ([]byte, error) {
	if inst.kernel == nil {
		name := moduleName(m.Path)
		inst.kernel = extism.NewKernel(extism.Config{Config: m.rt.cfg.ExtismConfig[name],
			Keyring: m.rt.cfg.ExtismKeyring[name], Name: name})
		if m.ext.ctors {
			if _, err := inst.mod.ExportedFunction(wasmCallCtors).Call(extism.With(ctx, inst.kernel)); err != nil {
				return nil, fmt.Errorf("%s: %w", wasmCallCtors, err)
			}
		}
	}
	k := inst.kernel
	if err := k.Begin(input, lim.MemoryBytes); err != nil {
		return nil, &abi.Error{Kind: abi.KindSchema, Message: err.Error()}
	}
	fn := inst.call // the Call export, looked up once per instance (see instance.exports)
	if fn == nil || export != m.ext.iface.Call {
		fn = inst.mod.ExportedFunction(export)
		if export == m.ext.iface.Call {
			inst.call = fn
		}
	}
	res, err := fn.Call(extism.With(ctx, k))
	if err != nil {
		var ee *extism.EgressError
		var ir *abi.InputRequest
		if errors.As(k.Failure(), &ir) && ctx.Err() == nil {
			return nil, ir // not a failure: the user's answer comes first
		}
		if errors.As(k.Failure(), &ee) && ctx.Err() == nil {
			return nil, &abi.Error{Kind: egressKind(ee.Err.Kind), Message: ee.Error()}
		}
		if f := k.Failure(); f != nil && ctx.Err() == nil {
			return nil, f
		}
		return nil, err
	}
	// As in Extism, the return code decides; error_set says why.
	if rc := int32(res[0]); rc != 0 {
		msg, _ := k.Error()
		if msg == "" {
			msg = fmt.Sprintf("%s returned %d", export, int32(res[0]))
		}
		return nil, &abi.Error{Kind: abi.KindInternal, Message: strings.TrimSpace(msg)}
	}
	b, _ := k.Output()
	if uint64(len(b)) > uint64(lim.OutputBytes) {
		return nil, fmt.Errorf("%s set %d bytes of output, over the %d-byte output cap", export, len(b), lim.OutputBytes)
	}
	return b, nil
}

// egressKind is the guest error kind of a plugin's failed http_request.
func egressKind(k abi.EgressErrorKind) abi.ErrorKind {
	switch k {
	case abi.EgressUnavailable, abi.EgressTimeout, abi.EgressRateLimited:
		return abi.KindTransient
	}
	return abi.KindInternal
}
