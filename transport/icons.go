package transport

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
)

// mcpIcons passes a manifest's icons through unchanged.
func mcpIcons(icons []abi.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, ic := range icons {
		out = append(out, mcp.Icon{Source: ic.Src, MIMEType: ic.MIMEType, Sizes: ic.Sizes, Theme: mcp.IconTheme(ic.Theme)})
	}
	return out
}
