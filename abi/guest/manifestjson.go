package guest

import (
	"encoding/json"
	"strconv"

	"github.com/toolhost/toolhost/abi/guest/abi"
)

// manifestJSON returns json.Marshal(m), written without reflection when m
// offers tools only (no resources, prompts or icons) and its schemas are
// already what json.Marshal makes of a json.RawMessage (compact, HTML
// characters escaped): what nearly every module describes. After the
// schemas, encoding m by reflection was the largest part of a describe on
// wazero's interpreter, where a cold module's first call runs it.
// TestManifestJSONMatchesMarshal holds the two to the same bytes, and
// fails when abi.Manifest or abi.ToolSpec gains a field this does not
// write.
func manifestJSON(m *abi.Manifest) ([]byte, error) {
	if b, ok := appendManifest(nil, m); ok {
		return b, nil
	}
	return json.Marshal(m)
}

// appendManifest appends m as json.Marshal writes it, or reports false
// when m is not of the shape it writes.
func appendManifest(b []byte, m *abi.Manifest) ([]byte, bool) {
	if !m.Listing.Empty() || m.Tools == nil {
		return nil, false
	}
	b = strconv.AppendInt(append(b, `{"abi":`...), int64(m.ABI), 10)
	b = appendOptInt(b, "timeout_ms", m.TimeoutMS)
	b = appendOptBool(b, "idempotent", m.Idempotent)
	b = appendOptBool(b, "read_only", m.ReadOnly)
	b = append(b, `,"tools":[`...)
	for i := range m.Tools {
		t := &m.Tools[i]
		if len(t.Icons) > 0 || len(t.InputSchema) == 0 || !verbatimJSON(t.InputSchema) || !verbatimJSON(t.OutputSchema) {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"name":`...), t.Name)
		if t.Title != "" {
			b = appendString(field(b, "title"), t.Title)
		}
		if t.Description != "" {
			b = appendString(field(b, "description"), t.Description)
		}
		b = append(field(b, "input_schema"), t.InputSchema...)
		if len(t.OutputSchema) > 0 {
			b = append(field(b, "output_schema"), t.OutputSchema...)
		}
		b = appendOptInt(b, "timeout_ms", t.TimeoutMS)
		b = appendOptBool(b, "idempotent", t.Idempotent)
		b = appendOptBool(b, "read_only", t.ReadOnly)
		b = appendOptBool(b, "destructive", t.Destructive)
		if t.Instances != "" {
			b = appendString(field(b, "instances"), string(t.Instances))
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if m.DynamicOffers {
		b = append(b, `,"dynamic_offers":true`...)
	}
	return append(b, '}'), true
}

// field appends the key of a member after the first. It and the two
// below are not inlined: appendManifest calls them a dozen times, and
// every Go tool links it.
//
//go:noinline
func field(b []byte, name string) []byte {
	return append(append(append(b, ',', '"'), name...), '"', ':')
}

//go:noinline
func appendOptInt(b []byte, name string, v *int) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendInt(field(b, name), int64(*v), 10)
}

//go:noinline
func appendOptBool(b []byte, name string, v *bool) []byte {
	if v == nil {
		return b
	}
	return strconv.AppendBool(field(b, name), *v)
}

// verbatimJSON reports whether json.Marshal writes raw, valid JSON, as
// it is: no white space outside strings, and nothing in strings it
// escapes (<, >, &, U+2028, U+2029). Schemas from the schema writer
// are; one a normalization rewrote may not be.
func verbatimJSON(raw json.RawMessage) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in && (c == '<' || c == '>' || c == '&'):
			return false
		case in && c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9):
			return false
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return !in
}
