package netguard

import (
	"errors"
	"net/netip"
	"testing"
)

func TestControl(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	check := Control(allow)
	for _, tt := range []struct {
		address string
		ok      bool
	}{
		{"93.184.215.14:443", true},
		{"127.0.0.1:8080", true}, // allowed explicitly
		{"127.0.0.2:8080", false},
		{"[::1]:443", false},
		{"[::ffff:127.0.0.1]:80", true},
		{"169.254.169.254:80", false},
		{"10.1.2.3:443", false},
		{"[fe80::1%eth0]:80", false},
		{"example.com:443", false},
	} {
		err := check("tcp", tt.address, nil)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok %v", tt.address, err, tt.ok)
		}
		var d *DeniedError
		if err != nil && !errors.As(err, &d) {
			t.Errorf("%s: %T is not a *DeniedError", tt.address, err)
		}
	}
}
