// Package registry holds the tool records: what each tool is, the flags and
// limits in force for it, its compiled input schema, and the handler that
// runs it. It knows tools, not time: timeouts are numbers here and policy in
// the dispatcher.
package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/toolhost/toolhost/abi"
)

// Handler runs one call of a tool. Implementations must honour ctx and be
// safe for concurrent use.
type Handler interface {
	Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// Request is one call as a handler receives it.
type Request struct {
	// Args are the call's arguments, validated against the input schema.
	Args json.RawMessage
	// Caller is the authenticated identity the call runs for; "" is the
	// anonymous caller. A handler that keeps anything between calls (a
	// warm instance) must keep it per caller.
	Caller string
}

// RequestHandler is a Handler that needs more of a call than its
// arguments: who it runs for. The dispatcher calls HandleRequest instead of
// Handle on a handler that has it. Implementations must honour ctx and be
// safe for concurrent use.
type RequestHandler interface {
	Handler
	HandleRequest(ctx context.Context, req Request) (json.RawMessage, error)
}

// Preparer is a Handler whose calls may first have to wait for the host
// rather than for the tool: for its code to compile, for a slot to make an
// instance in. The dispatcher calls Prepare under the caller's own context
// (its deadline, its cancellation) before it starts an attempt's timeout,
// runs the attempt under the context Prepare returned, and calls done
// once the attempt is over, so a tool's timeout_ms measures the tool.
// Prepare's error is what the call would have failed with (a context's
// error when ctx ended while it waited). A handler called without Prepare
// (an in-process caller) does the same waits inside its call.
// Implementations must be safe for concurrent use; done is called once.
type Preparer interface {
	Handler
	Prepare(ctx context.Context, req Request) (_ context.Context, done func(), _ error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return f(ctx, args)
}

// Tool is one tool's record. Build it, then hand it to New; after that it is
// read-only and safe to share.
type Tool struct {
	// Name is the manifest name, the tool's identity: the registry, the
	// config, events, the audit log and idempotency scopes use it.
	Name string
	// WireName is the name MCP clients see in tools/list (and may call,
	// beside Name); empty means SafeName(Name), which New fills in. The
	// loader sets it from the operator's naming (--tool-names=exact, a
	// module prefix, a tool's name in the config).
	WireName string
	// Hidden tools are not listed over MCP nor callable there (the
	// operator's expose = false); the dispatcher still runs them for
	// in-process callers such as a local plan run.
	Hidden       bool
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Timeout is the per-attempt timeout.
	Timeout time.Duration
	// Idempotent: calling twice has the effect of calling once, so a timed
	// out attempt may be retried.
	Idempotent bool
	// ReadOnly: the tool changes nothing outside itself.
	ReadOnly bool
	// Destructive: the tool may destroy or overwrite what it changes
	// (MCP destructiveHint; meaningless for a read-only tool).
	Destructive bool
	// OpenWorld: the tool may reach beyond the host (its module has an
	// egress grant; MCP openWorldHint).
	OpenWorld bool
	// Instances is the tool's instance policy in force: InstancesReuse
	// when its manifest declares it and the operator has not turned reuse
	// off for it (the handler then runs a caller's calls in that caller's
	// warm instances), else InstancesFresh.
	Instances abi.Instances
	// Icons are passed through to MCP clients.
	Icons []abi.Icon
	// MemoryBytes and OutputBytes are the limits in force (for display;
	// Handler enforces them).
	MemoryBytes uint64
	OutputBytes uint32
	// Module names what serves the tool: a module file and its sha256.
	Module Module
	// Handler runs the tool.
	Handler Handler

	input *jsonschema.Schema
	cost  costProfile // set with input
	// emptyArgs is the verdict on arguments {} (nil: valid), taken when
	// input is set (emptyChecked): a tool called without arguments, as
	// many are on every call, is not decoded and validated each time.
	emptyArgs    *SchemaError
	emptyChecked bool
}

// Module identifies the code that serves a tool.
type Module struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Registry maps names to tools. It is immutable and safe for concurrent use;
// a reload builds a new Registry.
type Registry struct {
	byName map[string]*Tool
	byWire map[string]*Tool // tools not Hidden, by WireName
	sorted []*Tool
	offers Offers // resources and prompts (offers.go)
}

// New prepares every tool's schemas (once per record: a record already in
// a registry is reused as is) and indexes the tools by name. Preparing
// replaces each schema by its normal form (abi.NormalizeSchema: what every
// MCP client accepts) and compiles it. New fails on a duplicate name or a
// schema that cannot be served or does not compile, naming the tool and,
// where it can, the JSON Pointer of the fault. It also fails, with a
// *ClashError, when two tools that are not hidden have one wire name.
// After New, the records must not be modified.
func New(tools []*Tool) (*Registry, error) {
	r := &Registry{byName: make(map[string]*Tool, len(tools)), byWire: make(map[string]*Tool, len(tools))}
	for _, t := range tools {
		if _, dup := r.byName[t.Name]; dup {
			return nil, fmt.Errorf("registry: tool %q registered twice", t.Name)
		}
		if t.Handler == nil {
			return nil, fmt.Errorf("registry: tool %q has no handler", t.Name)
		}
		// A record is compiled once, by the first registry it joins: a
		// reload builds a new registry from mostly the same records, which
		// the current registry is validating with at that very moment.
		if t.input == nil {
			if err := t.prepare(); err != nil {
				return nil, err
			}
		}
		if err := r.indexWire(t); err != nil {
			return nil, err
		}
		r.byName[t.Name] = t
		r.sorted = append(r.sorted, t)
	}
	slices.SortFunc(r.sorted, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	return r, nil
}

// Lookup returns the tool called name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// List returns every tool, sorted by name. The slice is shared: do not
// modify it.
func (r *Registry) List() []*Tool {
	return r.sorted
}
