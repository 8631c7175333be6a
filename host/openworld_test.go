package host_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// A module is open-world exactly when its grant names a host and it
// imports the egress functions: no grant, a grant that reaches nothing, or
// a module with nothing to call keeps it closed.
func TestModuleOpenWorld(t *testing.T) {
	loopback := toolhostv1.Grant{Hosts: []string{"127.0.0.1"}, Schemes: []string{"http"},
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	load := func(t *testing.T, path string, g *toolhostv1.Grant) *host.Module {
		t.Helper()
		var eg toolhostv1.Egress
		if g != nil {
			eg.Grants = map[string]toolhostv1.Grant{filepath.Base(path): *g}
		}
		m, err := newRuntime(t, host.Config{Egress: eg}).LoadFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	egress := testwasm.Go(t, "./host/testdata/egress")
	tests := []struct {
		name  string
		grant *toolhostv1.Grant
		want  bool
	}{
		{"no grant", nil, false},
		{"grant without hosts", &toolhostv1.Grant{}, false},
		{"grant", &loopback, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := load(t, egress, tt.grant).OpenWorld(); got != tt.want {
				t.Errorf("OpenWorld() = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("grant, no egress imports", func(t *testing.T) {
		if load(t, watPath(t, "echo"), &loopback).OpenWorld() {
			t.Error("echo.wat imports nothing, yet OpenWorld() = true")
		}
	})
}
