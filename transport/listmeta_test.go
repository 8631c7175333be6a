package transport

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// withListMeta adds the facts to the tools they name, in copies: the SDK's
// tools are shared by every tools/list answer.
func TestWithListMeta(t *testing.T) {
	a := &mcp.Tool{Name: "a_b", Meta: mcp.Meta{MetaToolName: "a.b"}}
	c := &mcp.Tool{Name: "c", Meta: mcp.Meta{MetaToolName: "c"}}
	list := &mcp.ListToolsResult{Tools: []*mcp.Tool{a, c}}
	got := withListMeta(list, map[string]map[string]any{"a.b": {MetaToolWarm: 3}})
	if got.Tools[0].Meta[MetaToolWarm] != 3 || got.Tools[0].Name != "a_b" {
		t.Errorf("a.b = %+v, want its warm fact", got.Tools[0])
	}
	if got.Tools[1] != c {
		t.Error("a tool without facts was copied")
	}
	if _, ok := a.Meta[MetaToolWarm]; ok || list.Tools[0] != a {
		t.Error("the shared tool or list was modified")
	}
}
