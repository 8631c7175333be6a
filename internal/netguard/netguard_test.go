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

// TestClassifyEmbeddedIPv4 holds issue 20's finding: IPv6 forms that
// carry a private IPv4 address passed for public.
func TestClassifyEmbeddedIPv4(t *testing.T) {
	const inside = " (inside a translated IPv6 address)"
	for _, tt := range []struct {
		addr, want string
	}{
		// The well-known NAT64 prefix (RFC 6052).
		{"64:ff9b::7f00:1", "a loopback address" + inside},
		{"64:ff9b::a9fe:a9fe", "a cloud metadata address" + inside},
		{"64:ff9b::808:808", ""},
		// Local-use NAT64 (RFC 8215): the /96 form is read, the others refused.
		{"64:ff9b:1::a00:1", "a private address" + inside},
		{"64:ff9b:1::c0a8:101", "a private address" + inside},
		{"64:ff9b:1::808:808", ""},
		{"64:ff9b:1:a00:1::", "a local-use NAT64 address whose IPv4 address cannot be read"},
		{"64:ff9b:1:ffff::808:808", "a local-use NAT64 address whose IPv4 address cannot be read"},
		// SIIT, IPv4-translated (RFC 6145).
		{"::ffff:0:127.0.0.1", "a loopback address" + inside},
		{"::ffff:0:10.0.0.1", "a private address" + inside},
		{"::ffff:0:169.254.169.254", "a cloud metadata address" + inside},
		{"::ffff:0:8.8.8.8", ""},
		// IPv4-compatible (RFC 4291, deprecated).
		{"::127.0.0.1", "a loopback address" + inside},
		{"::10.0.0.1", "a private address" + inside},
		{"::192.168.1.1", "a private address" + inside},
		{"::8.8.8.8", ""},
		{"::", "the unspecified address"},
		{"::1", "a loopback address"},
		// 6to4 (RFC 3056).
		{"2002:a00:1::1", "a private address" + inside},
		{"2002:c0a8:101::1", "a private address" + inside},
		{"2002:808:808::1", ""},
		// Teredo (RFC 4380): refused whatever it carries.
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo tunnel address"},
		{"2001:0:a00:1::1", "a Teredo tunnel address"},
		// Neighbours of the prefixes stay public.
		{"2001:4860:4860::8888", ""},
		{"64:ff9b:2::a00:1", ""},
		{"::1:ffff:0:a00:1", ""},
		// IPv4-mapped, as before.
		{"::ffff:10.0.0.1", "a private address"},
	} {
		if got := Classify(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("Classify(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}
