package transport

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/printable"
)

// A failed task's statusMessage quotes the tool's error message, which
// may be a guest's: it is one line with its control sequences escaped
// (issue 27 item 3), as guest notes are.
func TestTaskEndStatusMessageIsOneLine(t *testing.T) {
	de := &dispatcher.DispatchError{Kind: dispatcher.KindInternal, Message: "boom\x1b]52;c;eA==\x07\r\ntask t1: completed \u202e"}
	res := &mcp.CallToolResult{IsError: true, Meta: mcp.Meta{MetaError: de}}
	end := taskEnd(res, false)
	if _, _, bad := printable.First(end.Message); bad {
		t.Fatalf("statusMessage %q holds an unsafe character", end.Message)
	}
	if !strings.Contains(end.Message, `boom\x1b]52;c;eA==\a\r\ntask t1: completed \u202e`) {
		t.Fatalf("statusMessage %q", end.Message)
	}
}
