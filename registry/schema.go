package registry

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"github.com/toolhost/toolhost/abi"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// SchemaError is arguments that do not match a tool's input schema.
type SchemaError struct {
	Tool string
	// Path is the JSON Pointer of the first failing value ("" for the
	// arguments object itself).
	Path string
	// Reason says what is wrong there.
	Reason string
}

func (e *SchemaError) Error() string {
	where := e.Path
	if where == "" {
		where = "/"
	}
	return fmt.Sprintf("arguments for %s do not match its input schema: at %s: %s", e.Tool, where, e.Reason)
}

// noLoader refuses every external $ref: a manifest must not make the host
// read files or reach the network.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed (%s)", u)
}

// prepare puts t's schemas in normal form, compiles the input schema for
// Validate, and compiles the output schema only to refuse one that clients
// could not compile either. Validate uses the compact form of the input
// schema: it accepts the same arguments and its failures read better
// ("additional properties 'x' not allowed", not "'not' failed").
func (t *Tool) prepare() error {
	in, err := normalize(t.Name, "input", t.InputSchema)
	if err != nil {
		return err
	}
	var out []byte
	if len(t.OutputSchema) > 0 {
		if out, err = normalize(t.Name, "output", t.OutputSchema); err != nil {
			return err
		}
		if _, err := compileSchema(t.Name, "output", out); err != nil {
			return err
		}
	}
	compact, err := abi.CompactSchema(in)
	if err != nil { // cannot happen: in was just walked
		return fmt.Errorf("registry: tool %q: input schema: %w", t.Name, err)
	}
	sch, err := compileSchema(t.Name, "input", compact)
	if err != nil {
		return err
	}
	cost, err := schemaCost(t.Name, sch)
	if err != nil {
		return err
	}
	t.InputSchema, t.input, t.cost = in, sch, cost
	if out != nil {
		t.OutputSchema = out
	}
	t.checkEmptyArgs()
	return nil
}

// checkEmptyArgs takes the verdict on arguments {} once: it depends on
// nothing but the schema (and the tool's name, in the message), which
// never change after New.
func (t *Tool) checkEmptyArgs() {
	err := t.validate([]byte("{}"))
	se, ok := err.(*SchemaError)
	if err != nil && !ok {
		return // every verdict is a *SchemaError; if not, validate each time
	}
	t.emptyArgs, t.emptyChecked = se, true
}

// emptyObject reports whether args are {} (or empty, which counts as {}),
// whitespace around them aside.
func emptyObject(args []byte) bool {
	a := bytes.TrimSpace(args)
	return len(a) == 0 || string(a) == "{}"
}

func normalize(tool, which string, raw []byte) ([]byte, error) {
	out, err := abi.NormalizeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: %s schema cannot be served to MCP clients: %w", tool, which, err)
	}
	return out, nil
}

func compileSchema(tool, which string, raw []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: %s schema is not JSON: %w", tool, which, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	loc := "toolhost:///tools/" + url.PathEscape(tool) + "/" + which
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("registry: tool %q: %s schema: %w", tool, which, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: %s schema does not compile: %w", tool, which, err)
	}
	return sch, nil
}

var printer = message.NewPrinter(language.English)

// Validate checks args against the tool's input schema. Empty args count as
// {}. The error is a *SchemaError naming the deepest failing path.
func (t *Tool) Validate(args []byte) error {
	if t.emptyChecked && emptyObject(args) {
		if t.emptyArgs == nil {
			return nil
		}
		e := *t.emptyArgs // the caller's own copy
		return &e
	}
	return t.validate(args)
}

// validate is Validate without the verdict on {} taken at load.
func (t *Tool) validate(args []byte) error {
	inst, err := t.readArgs(args)
	if err != nil {
		return err
	}
	return t.check(inst)
}

// readArgs reads args for validation: UTF-8, JSON, no key named twice,
// and a cost the schema's profile allows. Its cost is linear in len(args).
func (t *Tool) readArgs(args []byte) (any, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	// encoding/json would replace invalid bytes and validate the result;
	// the guest would then get bytes that are no JSON text at all.
	if !utf8.Valid(args) {
		return nil, &SchemaError{Tool: t.Name, Reason: "arguments are not valid UTF-8"}
	}
	if inst, work, values, ok := t.decodeArgs(args); ok {
		if work > MaxValidationWork {
			return nil, t.costError(values)
		}
		return inst, nil
	}
	// Not JSON, or a key named twice: the two-pass reading names the
	// problem (and the first of several) as it always has.
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, &SchemaError{Tool: t.Name, Reason: "arguments are not valid JSON: " + err.Error()}
	}
	if err := t.precheck(args); err != nil {
		return nil, err
	}
	return inst, nil
}

// check validates prepared arguments against the schema.
func (t *Tool) check(inst any) error {
	err := t.input.Validate(inst)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &SchemaError{Tool: t.Name, Reason: err.Error()}
	}
	leaf := deepest(ve)
	return &SchemaError{Tool: t.Name, Path: pointer(leaf.InstanceLocation), Reason: reason(leaf)}
}

// reason renders a failure. The validator lists additional properties in
// map order; sort them so that the same arguments always get the same
// message.
func reason(v *jsonschema.ValidationError) string {
	if ap, ok := v.ErrorKind.(*kind.AdditionalProperties); ok {
		props := slices.Clone(ap.Properties)
		slices.Sort(props)
		return (&kind.AdditionalProperties{Properties: props}).LocalizedString(printer)
	}
	return v.ErrorKind.LocalizedString(printer)
}

// deepest follows the causes to the most specific failure: the first leaf
// with the longest instance path, so the message points where the fix goes.
// Causes are ordered by path, then by message, because the validator
// produces some of them in map order.
func deepest(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := e
	var walk func(*jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			if len(v.InstanceLocation) > len(best.InstanceLocation) || best == e {
				best = v
			}
			return
		}
		causes := append([]*jsonschema.ValidationError(nil), v.Causes...)
		sort.SliceStable(causes, func(i, j int) bool {
			if c := slices.Compare(causes[i].InstanceLocation, causes[j].InstanceLocation); c != 0 {
				return c < 0
			}
			return reason(causes[i]) < reason(causes[j])
		})
		for _, c := range causes {
			walk(c)
		}
	}
	walk(e)
	return best
}

// pointer renders an instance location as an RFC 6901 JSON Pointer.
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}
