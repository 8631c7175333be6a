package transport

import (
	"net"
	"net/netip"
	"testing"
)

// One peer per IPv4 address and per IPv6 /64; an IPv4-mapped address is
// its IPv4 address; zones and ports do not matter.
func TestPeerOf(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1:1000", "192.0.2.1:2000"},
		{"[::ffff:192.0.2.1]:1", "192.0.2.1:2"},
		{"[2001:db8:1:2::1]:1", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:2"},
		{"[fe80::1%eth0]:1", "[fe80::2%eth1]:2"},
	} {
		if pa, pb := peerOf(tcp(t, tc.a)), peerOf(tcp(t, tc.b)); pa != pb {
			t.Errorf("%s and %s: peers %q and %q; want one", tc.a, tc.b, pa, pb)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1:1", "192.0.2.2:1"},
		{"127.0.0.1:1", "127.0.0.2:1"}, // each loopback address is a peer (tests play several)
		{"[2001:db8:1:2::1]:1", "[2001:db8:1:3::1]:1"},
		{"[::1]:1", "127.0.0.1:1"},
	} {
		if pa, pb := peerOf(tcp(t, tc.a)), peerOf(tcp(t, tc.b)); pa == pb {
			t.Errorf("%s and %s: both peer %q; want two", tc.a, tc.b, pa)
		}
	}
	if got := peerOf(&net.UnixAddr{Name: "/run/toolhost.sock", Net: "unix"}); got != "/run/toolhost.sock" {
		t.Errorf("a unix socket's peer: %q", got)
	}
}

func tcp(t *testing.T, s string) *net.TCPAddr {
	t.Helper()
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return net.TCPAddrFromAddrPort(ap)
}
