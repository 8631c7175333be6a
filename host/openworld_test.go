package host_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// A module is open-world exactly when its grant names a host and it
// imports the egress functions: no grant, a grant that reaches nothing, or
// a module with nothing to call keeps it closed.
func TestModuleOpenWorld(t *testing.T) {
	tests := []struct {
		name  string
		grant *host.Grant
		want  bool
	}{
		{"no grant", nil, false},
		{"grant without hosts", &host.Grant{}, false},
		{"grant", loopbackGrant(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := egressModule(t, tt.grant, nil).OpenWorld(); got != tt.want {
				t.Errorf("OpenWorld() = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("grant, no egress imports", func(t *testing.T) {
		path := watPath(t, "echo")
		rt := newRuntime(t, host.Config{Egress: host.Egress{Grants: map[string]host.Grant{filepath.Base(path): *loopbackGrant()}}})
		m, err := rt.LoadFile(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if m.OpenWorld() {
			t.Error("echo.wat imports nothing, yet OpenWorld() = true")
		}
	})
}
