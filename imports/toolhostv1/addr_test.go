package toolhostv1

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// No address here is dialled: classify and checkDial are pure.
func TestClassifyAddresses(t *testing.T) {
	tests := []struct {
		addr, want string
	}{
		{"169.254.169.254", "a cloud metadata address"},
		{"fd00:ec2::254", "a cloud metadata address"},
		{"100.100.100.200", "a cloud metadata address"},
		{"169.254.1.1", "a link-local address"},
		{"fe80::1", "a link-local address"},
		{"127.0.0.1", "a loopback address"},
		{"127.9.9.9", "a loopback address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"10.1.2.3", "a private address"},
		{"172.31.255.255", "a private address"},
		{"192.168.0.10", "a private address"},
		{"fd12:3456::1", "a private (unique local) address"},
		{"100.64.0.1", "a shared (carrier-grade NAT) address"},
		{"0.0.0.0", `a "this network" address`},
		{"::", "the unspecified address"},
		{"224.0.0.1", "a multicast address"},
		{"64:ff9b::a00:1", "a private address (inside a translated IPv6 address)"},
		{"2002:7f00:1::", "a loopback address (inside a translated IPv6 address)"},
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"64:ff9b::808:808", ""},
	}
	for _, tt := range tests {
		if got := classify(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("classify(%s) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestCheckDial(t *testing.T) {
	g := &grant{networks: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")}}
	for _, tt := range []struct {
		address string
		ok      bool
	}{
		{"93.184.215.14:443", true},
		{"10.0.0.5:80", true}, // granted explicitly
		{"10.0.1.5:80", false},
		{"[::ffff:10.0.0.5]:80", true},
		{"127.0.0.1:80", false},
		{"[fe80::1%eth0]:80", false}, // a zone must not hide it
		{"example.com:80", false},    // the dialer always has an IP; anything else is refused
	} {
		err := g.checkDial("tcp", tt.address, nil)
		var denied *addressDenied
		if tt.ok != (err == nil) || (err != nil && !errors.As(err, &denied)) {
			t.Errorf("checkDial(%s) = %v, want ok=%v", tt.address, err, tt.ok)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"3", 3 * time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"Thu, 02 Jan 2025 03:04:15 GMT", 10 * time.Second, true},
		{"Thu, 02 Jan 2025 03:00:00 GMT", 0, true},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
	} {
		got, ok := retryAfter(tt.v, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}
