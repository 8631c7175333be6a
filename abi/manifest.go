package abi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Manifest is the JSON document toolhost_describe returns.
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
}

// ParseManifest decodes and checks a manifest: valid UTF-8 JSON, abi equal to
// Version, at least one tool, valid and unique names, an input schema that is
// a JSON object with "type": "object", an output schema (if any) that is a
// JSON object, and positive timeouts. Whether each schema is a valid JSON
// Schema is for the registry, which compiles it.
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
	if len(m.Tools) == 0 {
		return nil, contractErrorf("manifest", "no tools")
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
	}
	return checkTimeout("tool "+t.Name, t.TimeoutMS)
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
