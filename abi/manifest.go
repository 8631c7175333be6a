package abi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Manifest is the JSON document toolhost_describe returns (after
// ParseManifest, with its schemas in normal form).
//
// TimeoutMS, Idempotent and ReadOnly at the top level are the module's
// defaults; each tool inherits them unless it sets its own. Use Resolve to
// get the flags in force for each tool.
type Manifest struct {
	ABI        int        `json:"abi"`
	TimeoutMS  *int       `json:"timeout_ms,omitempty"`
	Idempotent *bool      `json:"idempotent,omitempty"`
	ReadOnly   *bool      `json:"read_only,omitempty"`
	Tools      []ToolSpec `json:"tools"`
	// Listing holds the resources, resource templates and prompts the
	// module offers beside its tools (see resources.go); none by default.
	Listing
	// DynamicOffers says the module lists more of them through a call
	// (CallListOffers), which the host makes once the module is loaded.
	DynamicOffers bool `json:"dynamic_offers,omitempty"`
}

// ToolSpec is one tool as a manifest declares it. Nil flags inherit the
// module default, then the ABI default.
type ToolSpec struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	TimeoutMS    *int            `json:"timeout_ms,omitempty"`
	Idempotent   *bool           `json:"idempotent,omitempty"`
	ReadOnly     *bool           `json:"read_only,omitempty"`
	// Destructive says the tool may destroy or overwrite what it changes
	// (MCP destructiveHint). Nil: false for a read-only tool, true
	// otherwise, as MCP's defaults.
	Destructive *bool `json:"destructive,omitempty"`
	// Instances says whether the host may serve calls from a warm
	// instance; empty means InstancesFresh.
	Instances Instances `json:"instances,omitempty"`
	// Icons are passed through to MCP clients.
	Icons []Icon `json:"icons,omitempty"`
}

// Tool is a tool with every default resolved: what a registry keeps.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	TimeoutMS    int             `json:"timeout_ms"`
	Idempotent   bool            `json:"idempotent"`
	ReadOnly     bool            `json:"read_only"`
	Destructive  bool            `json:"destructive"`
	Instances    Instances       `json:"instances"`
	Icons        []Icon          `json:"icons,omitempty"`
}

// ParseManifest decodes and checks a manifest: valid UTF-8 JSON, abi equal to
// Version, at least one tool, valid and unique names, an input schema that is
// a JSON object with "type": "object", an output schema (if any) that is one
// too, schemas every MCP client accepts (see NormalizeSchema; the returned
// manifest holds their normal form), positive timeouts, valid icons and
// instances, and no tool both read-only and destructive. Whether each
// schema is a valid JSON Schema is for the registry, which compiles it.
func ParseManifest(b []byte) (*Manifest, error) {
	if !utf8.Valid(b) {
		return nil, contractErrorf("manifest", "not valid UTF-8")
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, contractErrorf("manifest", "not valid JSON: %v", err)
	}
	if !atEOF(dec) {
		return nil, contractErrorf("manifest", "trailing data after the JSON object")
	}
	if m.ABI != Version {
		return nil, contractErrorf("manifest", "abi is %d, this host speaks %d", m.ABI, Version)
	}
	if err := checkTimeout("module", m.TimeoutMS); err != nil {
		return nil, err
	}
	if len(m.Tools) == 0 && !m.Offers() {
		return nil, contractErrorf("manifest", "no tools (and no resources or prompts)")
	}
	if err := m.Listing.check("manifest"); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(m.Tools))
	for i := range m.Tools {
		if err := m.Tools[i].check(i); err != nil {
			return nil, err
		}
		if seen[m.Tools[i].Name] {
			return nil, contractErrorf("manifest", "tool %q is declared twice", m.Tools[i].Name)
		}
		seen[m.Tools[i].Name] = true
		if pick(m.Tools[i].ReadOnly, m.ReadOnly, false) && pick(m.Tools[i].Destructive, nil, false) {
			return nil, contractErrorf("manifest", "tool %q: read_only and destructive are both true; a read-only tool changes nothing (set read_only false on the tool)", m.Tools[i].Name)
		}
	}
	return &m, nil
}

func (t *ToolSpec) check(i int) error {
	if !ValidToolName(t.Name) {
		return contractErrorf("manifest", "tools[%d]: name %q does not match ^[A-Za-z0-9_.-]{1,128}$", i, t.Name)
	}
	var in map[string]json.RawMessage
	if err := json.Unmarshal(t.InputSchema, &in); err != nil || in == nil {
		return contractErrorf("manifest", "tool %q: input_schema must be a JSON object", t.Name)
	}
	if string(bytes.TrimSpace(in["type"])) != `"object"` {
		return contractErrorf("manifest", `tool %q: input_schema must have "type": "object"`, t.Name)
	}
	if len(t.OutputSchema) > 0 {
		var out map[string]json.RawMessage
		if err := json.Unmarshal(t.OutputSchema, &out); err != nil || out == nil {
			return contractErrorf("manifest", "tool %q: output_schema must be a JSON object", t.Name)
		}
		// MCP clients (the TypeScript SDK among them) refuse a whole
		// tools/list whose output schema is not an object schema.
		if string(bytes.TrimSpace(out["type"])) != `"object"` {
			return contractErrorf("manifest", `tool %q: output_schema must have "type": "object" (MCP results are objects; wrap other values, e.g. {"value": ...})`, t.Name)
		}
	}
	if err := t.normalizeSchemas(); err != nil {
		return err
	}
	if err := t.Instances.check(); err != nil {
		return contractErrorf("manifest", "tool %q: %v", t.Name, err)
	}
	for j, ic := range t.Icons {
		if err := ic.check(); err != nil {
			return contractErrorf("manifest", "tool %q: icons[%d]: %v", t.Name, j, err)
		}
	}
	return checkTimeout("tool "+t.Name, t.TimeoutMS)
}

// normalizeSchemas replaces the tool's schemas by their normal form.
func (t *ToolSpec) normalizeSchemas() error {
	in, err := NormalizeSchema(t.InputSchema)
	if err != nil {
		return contractErrorf("manifest", "tool %q: input_schema %v", t.Name, err)
	}
	t.InputSchema = in
	if len(t.OutputSchema) > 0 {
		out, err := NormalizeSchema(t.OutputSchema)
		if err != nil {
			return contractErrorf("manifest", "tool %q: output_schema %v", t.Name, err)
		}
		t.OutputSchema = out
	}
	return nil
}

func checkTimeout(who string, ms *int) error {
	if ms != nil && *ms <= 0 {
		return contractErrorf("manifest", "%s: timeout_ms must be > 0, got %d", who, *ms)
	}
	return nil
}

// Resolve returns the module's tools with defaults applied: a tool's own
// value, else the module's, else the ABI default.
func (m *Manifest) Resolve() []Tool {
	tools := make([]Tool, len(m.Tools))
	for i, s := range m.Tools {
		tools[i] = Tool{
			Name:         s.Name,
			Title:        s.Title,
			Description:  s.Description,
			InputSchema:  s.InputSchema,
			OutputSchema: s.OutputSchema,
			TimeoutMS:    pick(s.TimeoutMS, m.TimeoutMS, DefaultTimeoutMS),
			Idempotent:   pick(s.Idempotent, m.Idempotent, false),
			ReadOnly:     pick(s.ReadOnly, m.ReadOnly, false),
			Instances:    s.Instances,
			Icons:        s.Icons,
		}
		tools[i].Destructive = !tools[i].ReadOnly && pick(s.Destructive, nil, true)
		if tools[i].Instances == "" {
			tools[i].Instances = InstancesFresh
		}
	}
	return tools
}

func pick[T any](own, module *T, def T) T {
	if own != nil {
		return *own
	}
	if module != nil {
		return *module
	}
	return def
}

// Instances is a tool's instance policy.
type Instances string

// The instance policies.
const (
	// InstancesFresh: every call gets a new instance (the default).
	InstancesFresh Instances = "fresh"
	// InstancesReuse: the tool keeps no state between calls that it
	// relies on, so the host may serve a caller's calls from one warm
	// instance.
	InstancesReuse Instances = "reuse"
)

func (i Instances) check() error {
	switch i {
	case "", InstancesFresh, InstancesReuse:
		return nil
	}
	return fmt.Errorf(`instances is %q; want "fresh" or "reuse"`, string(i))
}

// Icon is an MCP icon object (MCP 2025-11-25), passed through to clients in
// tools/list.
type Icon struct {
	// Src is an https: URL or a data: URI of the image.
	Src string `json:"src"`
	// MIMEType, when set, is an image type such as "image/png".
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes are sizes such as "48x48", or "any" for a scalable image.
	Sizes []string `json:"sizes,omitempty"`
	// Theme, when set, is "light" or "dark": the background it suits.
	Theme string `json:"theme,omitempty"`
}

// check refuses what a careful client would refuse: MCP asks clients to
// reject icon URIs with other schemes (javascript:, file:, http: in clear).
func (ic Icon) check() error {
	if !strings.HasPrefix(ic.Src, "https://") && !strings.HasPrefix(ic.Src, "data:image/") {
		return fmt.Errorf("src must be an https: URL or a data:image/ URI, got %q", truncate(ic.Src, 40))
	}
	if ic.MIMEType != "" && !strings.HasPrefix(ic.MIMEType, "image/") {
		return fmt.Errorf("mimeType %q is not an image type", ic.MIMEType)
	}
	for _, sz := range ic.Sizes {
		if sz == "" {
			return fmt.Errorf("sizes holds an empty string")
		}
	}
	if ic.Theme != "" && ic.Theme != "light" && ic.Theme != "dark" {
		return fmt.Errorf(`theme is %q; want "light" or "dark"`, ic.Theme)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
