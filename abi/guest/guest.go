// Package guest is the Go SDK for writing toolhost tools. A tool is a typed
// Go function; the SDK derives its input schema from the argument struct
// (struct tags as github.com/invopop/jsonschema reads them; see JSONSchema),
// generates toolhost_describe, owns guest memory, and turns returned errors
// into ABI error envelopes.
//
// The SDK is a module of its own with no dependencies (go get
// github.com/toolhost/toolhost/abi/guest); the wire contract's names, such
// as abi.KindSchema, abi.LogInfo and abi.InstancesReuse, are in its package
// github.com/toolhost/toolhost/abi/guest/abi, a generated copy of toolhost's
// package abi.
//
// The SDK keeps a fresh instance cheap: it imports the standard library
// only, and does nothing at package initialisation beyond recording each
// Register call. Schemas are reflected once per module, when the host
// calls toolhost_describe at load, never in the instances that serve calls,
// and results of plain types are written without building encoding/json's
// caches (every call in a fresh instance is its first).
//
// A tool module is built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/mytool.wasm .
//
// In a reactor, main is never run: register tools from init.
//
//	type Args struct {
//		Text string `json:"text" jsonschema:"description=the text to count"`
//	}
//
//	func init() {
//		guest.Register("text.count", guest.Options{Idempotent: true, ReadOnly: true},
//			func(a Args) (int, error) { return len(strings.Fields(a.Text)), nil })
//	}
//
//	func main() {}
//
// Registration happens during module initialisation, which is single-threaded;
// the SDK is not safe for concurrent use and need not be (a guest instance
// runs one call at a time).
package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// Options describe a tool beyond its name and function. The zero value is a
// tool with the ABI defaults: 30 s timeout, not idempotent, not read-only.
type Options struct {
	// Title is a short human-readable name.
	Title string
	// Description tells a model what the tool does and when to use it.
	Description string
	// TimeoutMS is the per-attempt timeout; 0 means the ABI default.
	TimeoutMS int
	// Idempotent says calling twice with the same arguments has the effect
	// of calling once, so the host may retry it after a timeout.
	Idempotent bool
	// ReadOnly says the tool changes nothing outside itself.
	ReadOnly bool
	// Destructive says the tool may destroy or overwrite what it changes
	// (MCP destructiveHint); nil means MCP's default: false for a
	// read-only tool, true otherwise. Set new(false) on a tool that only
	// adds.
	Destructive *bool
	// Instances is the tool's instance policy; empty means
	// abi.InstancesFresh. abi.InstancesReuse declares that the tool keeps
	// no state between calls that it relies on.
	Instances abi.Instances
	// Icons are shown by MCP clients that display tools.
	Icons []abi.Icon
}

type tool struct {
	spec       abi.ToolSpec // schemas filled in by describe
	argType    reflect.Type
	resultType reflect.Type
	call       func(args []byte) (any, error)
}

var (
	tools    []tool
	manifest []byte // built on first describe, after every init has run
)

// Register adds a tool named name that decodes its arguments into A, calls
// fn, and encodes the R it returns as the result. The input schema is
// reflected from A (a struct; fields without omitempty are required, unknown
// properties are refused); when R is a struct, so is the output schema.
//
// Register panics on an invalid or duplicate name or when A is not a struct:
// those are programming errors that would otherwise surface as a module that
// fails to load.
func Register[A, R any](name string, opts Options, fn func(A) (R, error)) {
	if !abi.ValidToolName(name) {
		panic(fmt.Sprintf("guest.Register: invalid tool name %q", name))
	}
	for _, t := range tools {
		if t.spec.Name == name {
			panic(fmt.Sprintf("guest.Register: tool %q registered twice", name))
		}
	}
	argType := reflect.TypeFor[A]()
	if argType.Kind() != reflect.Struct {
		panic(fmt.Sprintf("guest.Register(%q): arguments must be a struct, got %v", name, argType))
	}
	spec := abi.ToolSpec{
		Name:        name,
		Title:       opts.Title,
		Description: opts.Description,
		Idempotent:  &opts.Idempotent,
		ReadOnly:    &opts.ReadOnly,
		Destructive: opts.Destructive,
		Instances:   opts.Instances,
		Icons:       opts.Icons,
	}
	if opts.TimeoutMS > 0 {
		spec.TimeoutMS = &opts.TimeoutMS
	}
	// Schemas are reflected in describe, not here: Register runs in init,
	// which runs in every fresh instance, and reflection costs milliseconds.
	tools = append(tools, tool{spec: spec, argType: argType, resultType: reflect.TypeFor[R](), call: func(raw []byte) (any, error) {
		var a A
		if err := decodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return fn(a)
	}})
	manifest = nil
}

func reflectSchema(t reflect.Type) json.RawMessage {
	// No $schema: the host assumes 2020-12, and the line would be noise in
	// every manifest. Normal form: the reflection writes a field of type
	// any as true, and the TypeScript SDK 1.x wants property schemas as
	// objects; a closed struct's additionalProperties stays false, as
	// OpenAI's strict mode wants.
	b, err := normalSchema(reflectRoot(t))
	if err != nil {
		panic(fmt.Sprintf("guest: schema for %v: %v", t, err))
	}
	return b
}

func decodeArgs(raw []byte, into any) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return Schema(fmt.Errorf("arguments: %w", err))
	}
	return nil
}

// Error is an error with an ABI kind. Return one from a tool (or wrap one) to
// choose how the host treats the failure; any other error is KindInternal.
type Error struct {
	Kind       abi.ErrorKind
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Transient marks err as worth retrying: the host retries the call with
// backoff when the tool allows it.
func Transient(err error) error {
	return &Error{Kind: abi.KindTransient, Err: err}
}

// TransientAfter is Transient with the delay an upstream asked for (a
// Retry-After header); the host waits at least that long before retrying.
func TransientAfter(err error, retryAfter time.Duration) error {
	return &Error{Kind: abi.KindTransient, RetryAfter: retryAfter, Err: err}
}

// Schema marks err as a problem with the caller's arguments: the call will
// not succeed until the caller changes them, so it is never retried.
func Schema(err error) error {
	return &Error{Kind: abi.KindSchema, Err: err}
}

// Schemaf is Schema(fmt.Errorf(format, args...)).
func Schemaf(format string, args ...any) error {
	return Schema(fmt.Errorf(format, args...))
}

// describe returns the manifest JSON, built once.
func describe() []byte {
	if manifest == nil {
		specs := make([]abi.ToolSpec, len(tools))
		for i, t := range tools {
			specs[i] = t.spec
			specs[i].InputSchema = reflectSchema(t.argType)
			if t.resultType.Kind() == reflect.Struct {
				specs[i].OutputSchema = reflectSchema(t.resultType)
			}
		}
		m := abi.Manifest{ABI: abi.Version, Tools: specs}
		offerSpecs(&m)
		b, err := manifestJSON(&m)
		if err != nil {
			panic(fmt.Sprintf("guest: manifest: %v", err))
		}
		manifest = b
	}
	return manifest
}

// Dispatch runs the named tool on raw JSON arguments and returns the response
// document. It is what toolhost_call does; it is exported so tools can be
// unit-tested natively, without WebAssembly.
func Dispatch(name string, args []byte) []byte {
	doc, resp := dispatch(name, args)
	if doc != nil {
		return doc
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(errorResponse(abi.KindInternal, "encoding result: "+err.Error(), 0))
	}
	return b
}

// dispatch runs the named tool: a result as the whole response document
// (doc), any other outcome as resp.
func dispatch(name string, args []byte) (doc []byte, resp abi.Response) {
	defer endCall(beginCall())
	defer func() {
		if r := recover(); r != nil {
			// The stack goes to stderr (the host logs it); the message,
			// which a model reads, stays short.
			fmt.Fprintf(os.Stderr, "tool %s panicked: %v\n%s", name, r, debug.Stack())
			doc, resp = nil, errorResponse(abi.KindInternal, fmt.Sprintf("tool %s panicked: %v", name, r), 0)
		}
	}()
	for _, t := range tools {
		if t.spec.Name != name {
			continue
		}
		return reply(t.call(args))
	}
	if result, ok, err := dispatchOffer(name, args); ok {
		return reply(result, err)
	}
	return nil, errorResponse(abi.KindSchema, fmt.Sprintf("this module has no tool %q", name), 0)
}

func fromError(err error) abi.Response {
	var need *InputNeeded
	if errors.As(err, &need) {
		if cerr := abi.CheckInput(&need.Request); cerr != nil {
			return errorResponse(abi.KindInternal, "asking for input: "+cerr.Error(), 0)
		}
		return abi.Response{Input: &need.Request}
	}
	var ge *Error
	if errors.As(err, &ge) && ge.Kind.Valid() {
		return errorResponse(ge.Kind, err.Error(), ge.RetryAfter.Milliseconds())
	}
	return errorResponse(abi.KindInternal, err.Error(), 0)
}

func errorResponse(kind abi.ErrorKind, msg string, retryAfterMS int64) abi.Response {
	return abi.Response{Error: &abi.Error{Kind: kind, Message: msg, RetryAfterMS: retryAfterMS}}
}

// Manifest returns the module's manifest JSON, as toolhost_describe does. It
// is exported for native tests.
func Manifest() []byte { return describe() }

// resultEnvelope is the start of a result's response document.
const resultEnvelope = `{"result":`

// reply is a handler's outcome: a result as the whole response document,
// or an error as the response. The document is byte for byte what
// json.Marshal(abi.Response{Result: r}) writes (r is compact, escaped JSON
// as json.Marshal writes it), without building an encoder for abi.Response
// by reflection in every fresh instance, where each call is the first; and
// in one buffer, which a small result fills without growing it.
func reply(result any, err error) ([]byte, abi.Response) {
	if err != nil {
		return nil, fromError(err)
	}
	doc, err := appendMarshal(append(make([]byte, 0, 128), resultEnvelope...), result)
	if err != nil {
		return nil, errorResponse(abi.KindInternal, "encoding result: "+err.Error(), 0)
	}
	return append(doc, '}'), abi.Response{}
}
