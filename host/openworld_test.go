package host_test

import (
	"testing"

	"github.com/toolhost/toolhost/host"
)

// A module is open-world exactly when its grant names a host: no grant, or
// a grant that reaches nothing, keeps it closed.
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
}
