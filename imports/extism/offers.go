package extism

import (
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/abi"
)

// hyper-mcp v2's exports for resources and prompts, each optional.
const (
	ExportListResources         = "list_resources"
	ExportListResourceTemplates = "list_resource_templates"
	ExportListPrompts           = "list_prompts"
	ExportReadResource          = "read_resource"
	ExportGetPrompt             = "get_prompt"
)

// Offers are the outputs of a v2 plugin's list exports (nil for one it
// does not export): MCP's ListResourcesResult, ListResourceTemplatesResult
// and ListPromptsResult.
type Offers struct {
	Resources, ResourceTemplates, Prompts []byte
}

// listing turns o into toolhost's manifest listing: MCP's shapes are its
// own, field for field.
func (o Offers) listing() (abi.Listing, error) {
	var l abi.Listing
	for _, part := range []struct {
		export string
		out    []byte
		dst    any
	}{
		{ExportListResources, o.Resources, &struct {
			Resources *[]abi.Resource `json:"resources"`
		}{&l.Resources}},
		{ExportListResourceTemplates, o.ResourceTemplates, &struct {
			ResourceTemplates *[]abi.ResourceTemplate `json:"resourceTemplates"`
		}{&l.ResourceTemplates}},
		{ExportListPrompts, o.Prompts, &struct {
			Prompts *[]abi.Prompt `json:"prompts"`
		}{&l.Prompts}},
	} {
		if part.out == nil {
			continue
		}
		if err := json.Unmarshal(part.out, part.dst); err != nil {
			return l, fmt.Errorf("%s: not MCP's list result: %v", part.export, err)
		}
	}
	return l, nil
}

// OfferCall returns the v2 export and its input for a toolhost read or get
// (abi.CallReadResource, abi.CallGetPrompt) with args: hyper-mcp's
// {request, context}, whose request is MCP's params, the same as
// toolhost's arguments. false for any other call name.
func (i Interface) OfferCall(call string, args json.RawMessage) (export string, input []byte, ok bool) {
	switch call {
	case abi.CallReadResource:
		export = ExportReadResource
	case abi.CallGetPrompt:
		export = ExportGetPrompt
	default:
		return "", nil, false
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	input, _ = json.Marshal(struct {
		Request json.RawMessage `json:"request"`
		Context requestContext  `json:"context"`
	}{args, requestContext{Meta: map[string]any{}}})
	return export, input, true
}
