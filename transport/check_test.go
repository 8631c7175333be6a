package transport_test

import (
	"encoding/json"
	"testing"

	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

func TestCheckTool(t *testing.T) {
	good := &registry.Tool{Name: "ok", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`)}
	if err := transport.CheckTool(good); err != nil {
		t.Fatalf("good tool refused: %v", err)
	}
	// The SDK's AddTool panics on this schema; a server must never see it.
	bad := &registry.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"X-A"}}}`)}
	if err := transport.CheckTool(bad); err == nil {
		t.Fatal("a schema the SDK panics on was accepted")
	}
}
