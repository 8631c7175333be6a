package transport_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/registry"
	"github.com/toolhost/toolhost/transport"
)

// offersServer serves the fakes' tools plus one resource and one prompt;
// SetTools(tools) takes both away.
func offersServer(t *testing.T) (*transport.Server, *registry.Registry) {
	t.Helper()
	var f fakes
	tools := f.registry(t)
	reg := withOffers(t, tools, registry.Offers{
		Resources: []*registry.Resource{{Resource: abi.Resource{URI: "x://a", Name: "a"}, Offering: offering(echoRead)}},
		Prompts:   []*registry.Prompt{{Prompt: abi.Prompt{Name: "p"}, Offering: offering(echoRead)}},
	})
	return transport.New(dispatcher.New(reg, dispatcher.Config{}), reg, transport.Options{Version: "test", Logger: slog.New(slog.DiscardHandler)}), tools
}

type listChanges struct{ resources, prompts chan struct{} }

func (c listChanges) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { c.resources <- struct{}{} },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { c.prompts <- struct{}{} },
	}
}

func newListChanges() listChanges {
	return listChanges{resources: make(chan struct{}, 8), prompts: make(chan struct{}, 8)}
}

// goneForTold checks what a 2025-11-25 session told of resources and
// prompts at initialize is served once they are gone: empty lists (what
// the list_changed it heard announces), and not found for what it read.
func goneForTold(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	if list, err := cs.ListResources(t.Context(), nil); err != nil || len(list.Resources) != 0 {
		t.Errorf("resources/list after the last resource went: %+v, %v; want an empty list", list, err)
	}
	if list, err := cs.ListPrompts(t.Context(), nil); err != nil || len(list.Prompts) != 0 {
		t.Errorf("prompts/list after the last prompt went: %+v, %v; want an empty list", list, err)
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "x://a"}); err == nil || rpcCode(err) == jsonrpc.CodeMethodNotFound {
		t.Errorf("reading the resource gone: %v; want not found, not -32601", err)
	}
}

// A reload that takes the last resource and the last prompt away tells
// the 2025-11-25 sessions that listed them (resources/list_changed,
// prompts/list_changed) and keeps serving them empty lists, as their
// capabilities promised for the session's life; a session opened after
// is told of neither and gets -32601 (in memory, on the SDK's path).
func TestOffersGoneInSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, tools := offersServer(t)
		connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.MCP().Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "offers-gone", Version: "v0"}, opts).Connect(t.Context(), ct,
				&mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close(); ss.Wait() })
			return cs
		}
		changes := newListChanges()
		cs := connect(changes.options())
		if list, err := cs.ListResources(t.Context(), nil); err != nil || len(list.Resources) != 1 {
			t.Fatalf("resources/list: %+v, %v", list, err)
		}
		srv.SetTools(tools)
		time.Sleep(time.Second) // past the SDK's coalescing delay, on the bubble's clock
		synctest.Wait()
		if len(changes.resources) == 0 || len(changes.prompts) == 0 {
			t.Fatalf("after the last offers went: %d resources/list_changed, %d prompts/list_changed; want both", len(changes.resources), len(changes.prompts))
		}
		goneForTold(t, cs)
		late := connect(nil)
		if caps := late.InitializeResult().Capabilities; caps.Resources != nil || caps.Prompts != nil {
			t.Fatalf("a session opened after: capabilities %+v", caps)
		}
		if _, err := late.ListResources(t.Context(), nil); rpcCode(err) != jsonrpc.CodeMethodNotFound {
			t.Errorf("a session never told of resources: resources/list %v, want -32601", err)
		}
	})
}

// Over HTTP: a 2025-11-25 session hears list_changed on its stream and is
// served empty lists through the front; a 2026-07-28 listener hears both
// notifications, and a 2026-07-28 request then gets -32601 (its
// server/discover no longer names resources).
func TestOffersGoneOverHTTP(t *testing.T) {
	srv, tools := offersServer(t)
	hs := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(hs.Close)
	changes := newListChanges()
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "offers-gone", Version: "v0"}, changes.options()).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20251125})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { legacy.Close() })
	modern, err := mcp.NewClient(&mcp.Implementation{Name: "offers-gone", Version: "v0"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: transport.Revision20260728})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { modern.Close() })
	if list, err := legacy.ListResources(t.Context(), nil); err != nil || len(list.Resources) != 1 {
		t.Fatalf("resources/list: %+v, %v", list, err)
	}
	events := listenFor(t, hs.URL, `{"resourcesListChanged":true,"promptsListChanged":true}`)
	srv.SetTools(tools)
	heard := map[string]bool{}
	for len(heard) < 2 {
		ev := <-events
		for _, n := range []string{"notifications/resources/list_changed", "notifications/prompts/list_changed"} {
			if strings.Contains(ev, n) {
				heard[n] = true
			}
		}
	}
	for _, ch := range []chan struct{}{changes.resources, changes.prompts} {
		select {
		case <-ch:
		case <-t.Context().Done():
			t.Fatal("the 2025-11-25 session did not hear list_changed")
		}
	}
	goneForTold(t, legacy)
	if _, err := modern.ListResources(t.Context(), nil); !strings.Contains(errString(err), "no module in this server's plugins folder offers resources") {
		t.Errorf("a 2026-07-28 resources/list with nothing offered: %v, want -32601", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
