// Package loader turns a plugins folder into a tool registry: it loads the
// modules through host/ and binds each manifest tool to a registry record
// whose handler runs the tool in a fresh instance.
package loader

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/registry"
)

// ReservedPrefix starts the names of toolhost's own tools (toolhost.plan);
// a module declaring one is refused, so it can never shadow a built-in.
const ReservedPrefix = "toolhost."

// ReservedWirePrefix starts the wire names of toolhost's own tools
// (toolhost_plan); a tool whose wire name starts with it is refused.
const ReservedWirePrefix = "toolhost_"

// Result is a loaded plugins folder.
type Result struct {
	// Registry serves the tools of every module that loaded.
	Registry *registry.Registry
	// Errors are the files that did not load, each with its reason.
	Errors []*host.LoadError
	// Live is the folder, should the caller want to watch it.
	Live *Live
}

// Override is the operator's word on one tool, over its manifest. Zero
// fields keep the manifest's value (limits: the runtime's).
type Override struct {
	Timeout    time.Duration
	Idempotent *bool
	ReadOnly   *bool
	Limits     host.Limits
	// Expose false hides the tool from MCP clients (not listed, not
	// callable there); nil keeps it exposed.
	Expose *bool
	// WireName replaces the name MCP clients see (module prefix and
	// --tool-names alike); it must match ^[a-zA-Z0-9_-]{1,64}$.
	WireName string
	// Description replaces the manifest's description.
	Description string
	// Reuse false keeps every call of the tool in a fresh instance even
	// when its manifest says "instances": "reuse"; nil follows the
	// module's word (Options.Reuse), then the manifest. true cannot make
	// a tool reuse instances that its manifest does not allow.
	Reuse *bool
}

// Options configure Load. The zero value loads with no overrides and no
// progress output.
type Options struct {
	// Progress receives one line per module file; nil means none.
	Progress io.Writer
	// Check, when set, vets each tool record before it is served (e.g. the
	// MCP transport's own rules for a listing); an error refuses the
	// module like any other load error.
	Check func(*registry.Tool) error
	// Overrides are per-tool overrides by tool name.
	Overrides map[string]Override
	// ExactNames keeps manifest names on the wire (serve
	// --tool-names=exact) instead of their client-safe form
	// (registry.SafeName).
	ExactNames bool
	// Prefixes put a prefix before the wire names of a module's tools, by
	// module file name ("github.wasm"); each must be client-safe.
	Prefixes map[string]string
	// Reuse false, by module file name ("github.wasm"), keeps every tool
	// of the module in fresh instances (see Override.Reuse).
	Reuse map[string]bool
	// OwnersFile records which file holds each tool name, so that when two
	// files declare one name the file that held it first keeps it across
	// restarts. Empty means no record: a clash at start-up goes to the
	// file first in name order.
	OwnersFile string
	// Background, at Open, lists at once the modules the runtime can list
	// without compiling (host.Runtime.Listable: a lazy runtime's describe
	// cache) and compiles the others in the background, each listed (or
	// refused) by a rescan of its own when it is done, so OnChange
	// listeners hear of it as of a reload. Live.Starting and Live.Listed
	// tell how far that is. Without it Open returns once every module is
	// loaded. When two modules compiling in the background declare one
	// tool name, the first done keeps it.
	Background bool
	// Admit, when set, is the trust gate: asked with a module file's name
	// ("echo.wasm") and the sha256 (hex) of its bytes before they load,
	// an error refuses them (an UntrustedError; any previous version keeps
	// serving) until a later rescan finds it admits them. AdmitFile names
	// the file of the folder its answers follow (serve's is toolhost.lock):
	// a change to it rescans the folder, as a module file's change does.
	Admit     func(name, sha256 string) error
	AdmitFile string
}

// Load loads every module in dir once, as Open does (writing a progress
// line per file to Options.Progress), and returns the registry with the
// files it refused.
func Load(ctx context.Context, rt *host.Runtime, dir string, opts Options) (*Result, error) {
	live, ch, err := open(ctx, rt, dir, opts, nil)
	if err != nil {
		return nil, err
	}
	return &Result{Registry: live.Registry(), Errors: ch.Errors, Live: live}, nil
}

// Check reports why m's tools cannot be served — a reserved name, an input
// schema that does not compile, or Options.Check's verdict — or nil. It is
// what serve would refuse the module for, after the host accepted it.
func Check(m *host.Module, opts Options) error {
	_, err := records(m, nil, opts)
	return err
}

// records builds the module's registry records, each checked on its own so
// one bad tool refuses its module rather than the folder. ref counts calls
// for hot reload (nil outside a Live folder).
func records(m *host.Module, ref *moduleRef, opts Options) ([]*registry.Tool, error) {
	recs := make([]*registry.Tool, 0, len(m.Tools))
	for _, t := range m.Tools {
		if strings.HasPrefix(t.Name, ReservedPrefix) {
			return nil, fmt.Errorf("tool %q: names starting with %q are reserved for toolhost's built-in tools", t.Name, ReservedPrefix)
		}
		o := opts.Overrides[t.Name]
		if allow, ok := opts.Reuse[filepath.Base(m.Path)]; ok && o.Reuse == nil {
			o.Reuse = &allow // the module's word, unless the tool has its own
		}
		rec := record(m, t, o, ref)
		rec.WireName = wireName(rec, opts)
		if err := checkWireName(rec, opts); err != nil {
			return nil, err
		}
		if _, err := registry.New([]*registry.Tool{rec}); err != nil {
			return nil, err
		}
		if opts.Check != nil {
			if err := opts.Check(rec); err != nil {
				return nil, fmt.Errorf("tool %q: %w", t.Name, err)
			}
		}
		recs = append(recs, rec)
	}
	// Two of the module's own tools may map to one wire name ("a.b" and
	// "a_b").
	if _, err := registry.New(recs); err != nil {
		return nil, err
	}
	return recs, nil
}

// Record binds one of m's tools into a registry record, with the operator's
// override applied: the record holds the flags and limits in force.
func Record(m *host.Module, t abi.Tool, o Override) *registry.Tool {
	return record(m, t, o, nil)
}

func record(m *host.Module, t abi.Tool, o Override, ref *moduleRef) *registry.Tool {
	lim := m.EffectiveLimits(o.Limits)
	reuse := m.Reusable(t.Name) && (o.Reuse == nil || *o.Reuse)
	instances := abi.InstancesFresh
	if reuse {
		instances = abi.InstancesReuse
	}
	rec := &registry.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
		Timeout:      time.Duration(t.TimeoutMS) * time.Millisecond,
		Idempotent:   t.Idempotent,
		ReadOnly:     t.ReadOnly,
		Destructive:  t.Destructive,
		OpenWorld:    m.OpenWorld(),
		Instances:    instances,
		Icons:        t.Icons,
		MemoryBytes:  lim.MemoryBytes,
		OutputBytes:  lim.OutputBytes,
		Module:       registry.Module{Path: m.Path, SHA256: m.SHA256},
		Handler:      &boundTool{mod: m, ref: ref, name: t.Name, lim: lim, reuse: reuse},
	}
	if o.Timeout > 0 {
		rec.Timeout = o.Timeout
	}
	if o.Idempotent != nil {
		rec.Idempotent = *o.Idempotent
	}
	if o.ReadOnly != nil {
		rec.ReadOnly = *o.ReadOnly
	}
	if o.Expose != nil {
		rec.Hidden = !*o.Expose
	}
	if o.Description != "" {
		rec.Description = o.Description
	}
	switch {
	case rec.ReadOnly:
		// The operator's word that a tool changes nothing outweighs the
		// manifest's default for a tool that may.
		rec.Destructive = false
	case t.ReadOnly:
		// The operator says a tool its manifest calls read-only writes:
		// MCP's default for such a tool, unless the manifest said
		// otherwise.
		rec.Destructive = declaredDestructive(m, t.Name)
	}
	return rec
}

// declaredDestructive is the manifest's destructive for the tool called
// name, or MCP's default for a tool that writes (true) when it has none.
func declaredDestructive(m *host.Module, name string) bool {
	if m.Manifest != nil {
		for _, s := range m.Manifest.Tools {
			if s.Name == name && s.Destructive != nil {
				return *s.Destructive
			}
		}
	}
	return true
}

type boundTool struct {
	mod   *host.Module
	ref   *moduleRef // nil outside a Live folder
	name  string
	lim   host.Limits
	reuse bool // the operator allows warm instances (the host checks the manifest)
}

// maxReplaced bounds how many successive versions one call chases when
// reloads keep replacing its tool as it starts; each step means a newer
// version was already serving, so this is reached only under a reload storm.
const maxReplaced = 16

// Handle runs the call. A call that looked the tool up just before a
// reload retired its module did not lose anything: it runs on the version
// now serving (installed before the old one retired), so a reload never
// fails a call, never counts against the tool's breaker, and never leaves
// a failure stored under an idempotency key.
func (b *boundTool) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return b.HandleRequest(ctx, registry.Request{Args: args})
}

// HandleRequest is Handle for req.Caller: a tool that reuses instances
// runs in one of that caller's warm instances.
func (b *boundTool) HandleRequest(ctx context.Context, req registry.Request) (json.RawMessage, error) {
	cur, release, err := b.current()
	if err != nil {
		return nil, err
	}
	defer release()
	return cur.mod.Do(ctx, cur.request(req))
}

// Prepare waits, under the caller's context, for the code and the
// admission slot of the call (see host.Module.Prepare), on the version
// serving now, which it keeps open until done: the call that follows runs
// on it without waiting again (a reload in between only makes it wait in
// the call, as it would without Prepare).
func (b *boundTool) Prepare(ctx context.Context, req registry.Request) (context.Context, func(), error) {
	cur, release, err := b.current()
	if err != nil {
		return nil, nil, err
	}
	pctx, done, err := cur.mod.Prepare(ctx, cur.request(req))
	if err != nil {
		release()
		return nil, nil, err
	}
	return pctx, func() { done(); release() }, nil
}

func (b *boundTool) request(req registry.Request) host.Request {
	return host.Request{Tool: b.name, Args: req.Args, Limits: b.lim, Caller: req.Caller, Reuse: b.reuse}
}

// current returns the version of the tool to run a call on, registered as
// a call in flight on it until release. A call that looked the tool up
// just before a reload retired its module runs on the version now serving.
func (b *boundTool) current() (_ *boundTool, release func(), _ error) {
	if b.ref == nil {
		return b, func() {}, nil
	}
	for cur, n := b, 0; n < maxReplaced; n++ {
		if cur.ref.acquire() {
			return cur, cur.ref.release, nil
		}
		next := cur.ref.live.serving(cur.name)
		if next == nil {
			// Removed by the reload: a retry looks it up again, and the
			// dispatcher answers not_found.
			return nil, nil, &abi.Error{Kind: abi.KindTransient,
				Message: fmt.Sprintf("tool %s was removed as the call started", b.name)}
		}
		if next == cur {
			break // the folder was closed: nothing newer will come
		}
		cur = next
	}
	return nil, nil, &abi.Error{Kind: abi.KindTransient,
		Message: fmt.Sprintf("tool %s: its module kept being replaced as the call started; call it again", b.name)}
}
