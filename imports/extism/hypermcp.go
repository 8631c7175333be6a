package extism

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolhost/toolhost/abi"
)

// Interface is one of hyper-mcp's plugin interfaces: which exports list
// the tools and call one, and the JSON they take. Both return MCP's
// shapes: ListToolsResult and CallToolResult.
type Interface struct {
	// Version is 1 (describe, call) or 2 (list_tools, call_tool).
	Version int
	// List and Call are the names of the exports, each () -> i32 (0:
	// success), with input and output through the kernel.
	List, Call string
}

// The interfaces hyper-mcp defines.
var (
	V1 = Interface{Version: 1, List: "describe", Call: "call"}
	V2 = Interface{Version: 2, List: "list_tools", Call: "call_tool"}
)

// Detect returns the interface a module's exports implement (v2 when it
// has both), false when neither.
func Detect(exported func(name string) bool) (Interface, bool) {
	for _, i := range []Interface{V2, V1} {
		if exported(i.List) && exported(i.Call) {
			return i, true
		}
	}
	return Interface{}, false
}

// requestContext is hyper-mcp's PluginRequestContext.
type requestContext struct {
	ID   int64          `json:"id"`
	Meta map[string]any `json:"_meta"`
}

// ListInput is the input of the List export: nothing for v1, a
// ListToolsRequest {context} for v2.
func (i Interface) ListInput() []byte {
	if i.Version == 1 {
		return nil
	}
	b, _ := json.Marshal(struct {
		Context requestContext `json:"context"`
	}{requestContext{Meta: map[string]any{}}})
	return b
}

// CallInput is the input of the Call export for one call of tool with
// args (a JSON object, or nothing): v1 {params: {name, arguments}}, v2
// {request: {name, arguments}, context}.
func (i Interface) CallInput(tool string, args json.RawMessage) []byte {
	type params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	}
	p := params{Name: tool, Arguments: args}
	var b []byte
	if i.Version == 1 {
		b, _ = json.Marshal(struct {
			Params params `json:"params"`
		}{p})
	} else {
		b, _ = json.Marshal(struct {
			Request params         `json:"request"`
			Context requestContext `json:"context"`
		}{p, requestContext{Meta: map[string]any{}}})
	}
	return b
}

// mcpTool is the part of MCP's Tool toolhost maps.
type mcpTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
		IdempotentHint  *bool  `json:"idempotentHint"`
	} `json:"annotations"`
	Icons []abi.Icon `json:"icons"`
}

// Manifest turns the List export's ListToolsResult into a toolhost
// manifest (JSON, for abi.ParseManifest): names, schemas, titles and the
// annotations' hints as toolhost's own flags, and the resources, resource
// templates and prompts of offers. Every tool may reuse instances
// ("instances": "reuse"): hyper-mcp keeps one instance per plugin, so
// plugins are written to be called again in the same one.
func Manifest(listed []byte, offers Offers) ([]byte, error) {
	var res struct {
		Tools []mcpTool `json:"tools"`
	}
	if err := json.Unmarshal(listed, &res); err != nil {
		return nil, fmt.Errorf("the tool list is not an MCP ListToolsResult: %v", err)
	}
	listing, err := offers.listing()
	if err != nil {
		return nil, err
	}
	m := abi.Manifest{ABI: abi.Version, Tools: make([]abi.ToolSpec, 0, len(res.Tools)), Listing: listing}
	for _, t := range res.Tools {
		spec := abi.ToolSpec{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
			ReadOnly: t.Annotations.ReadOnlyHint, Idempotent: t.Annotations.IdempotentHint,
			Destructive: t.Annotations.DestructiveHint, Instances: abi.InstancesReuse, Icons: t.Icons}
		if spec.Title == "" {
			spec.Title = t.Annotations.Title
		}
		if len(spec.InputSchema) == 0 || string(spec.InputSchema) == "null" {
			spec.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if string(spec.OutputSchema) == "null" {
			spec.OutputSchema = nil
		}
		m.Tools = append(m.Tools, spec)
	}
	return json.Marshal(m)
}

// Result maps the Call export's CallToolResult onto toolhost's guest
// response: isError is an internal error whose message is the result's
// text; otherwise the result is structuredContent when there is one,
// else the text of a lone text content, else the content array.
func Result(out []byte) (json.RawMessage, error) {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		IsError           bool              `json:"isError"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("the result is not an MCP CallToolResult: %v", err)
	}
	var texts []string
	for _, c := range res.Content {
		var t struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(c, &t) == nil && t.Type == "text" {
			texts = append(texts, t.Text)
		}
	}
	if res.IsError {
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the plugin reported an error"
		}
		return nil, &abi.Error{Kind: abi.KindInternal, Message: msg}
	}
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		return res.StructuredContent, nil
	}
	if len(res.Content) == 1 && len(texts) == 1 {
		b, _ := json.Marshal(texts[0])
		return b, nil
	}
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	b, _ := json.Marshal(res.Content)
	return b, nil
}
