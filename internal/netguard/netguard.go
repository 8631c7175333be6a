// Package netguard classifies IP addresses for the server-side request
// forgery rules that every outbound request toolhost makes on someone
// else's behalf obeys: a tool's egress (package host) and the OAuth
// resource server's metadata, JWKS and introspection fetches (package
// oauth). Keeping one table means a range refused for one is refused for
// the other.
package netguard

import (
	"fmt"
	"net/netip"
	"syscall"
)

// refused are the address ranges a request may not dial unless the
// operator allows them: everything that is not the public internet, where
// a request could reach the host itself, its neighbours or a cloud
// metadata service.
var refused = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "a cloud metadata address"},
	{netip.MustParsePrefix("100.100.100.200/32"), "a cloud metadata address"},
	{netip.MustParsePrefix("0.0.0.0/8"), `a "this network" address`},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "a loopback address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("fc00::/7"), "a private (unique local) address"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local address"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast address"},
}

// Translation prefixes whose addresses carry an IPv4 address that is
// checked in turn.
var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// Classify says what kind of non-public address a is ("a loopback
// address"), or "" for a public one.
func Classify(a netip.Addr) string {
	// Prefix.Contains is false for any address with a zone: drop it, or
	// fe80::1%eth0 would pass for public.
	a = a.Unmap().WithZone("")
	for _, r := range refused {
		if r.prefix.Contains(a) {
			return r.what
		}
	}
	if a.Is6() {
		b := a.As16()
		var v4 netip.Addr
		switch {
		case nat64.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixTo4.Contains(a):
			v4 = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		}
		if v4.IsValid() {
			if what := Classify(v4); what != "" {
				return what + " (inside a translated IPv6 address)"
			}
		}
	}
	return ""
}

// DeniedError is a dial to an address the rules refuse.
type DeniedError struct {
	// Addr is the address dialled; invalid when the dialer was handed
	// something that is not an IP address.
	Addr netip.Addr
	// What says which kind of address it is.
	What string
}

func (e *DeniedError) Error() string {
	if !e.Addr.IsValid() {
		return e.What
	}
	return fmt.Sprintf("address %s is %s", e.Addr, e.What)
}

// Control returns a net.Dialer Control function that refuses every
// non-public address outside allow. The dialer calls it with the address
// actually being connected to, after name resolution, for every attempt
// (each address a name resolves to, each redirect), so neither a name that
// resolves to a private address nor DNS rebinding gets past it.
func Control(allow []netip.Prefix) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &DeniedError{What: "not an IP address: " + address}
		}
		a := ap.Addr().Unmap().WithZone("")
		what := Classify(a)
		if what == "" || Allowed(a, allow) {
			return nil
		}
		return &DeniedError{Addr: a, What: what}
	}
}

// Allowed reports whether a is inside one of allow.
func Allowed(a netip.Addr, allow []netip.Prefix) bool {
	a = a.Unmap().WithZone("")
	for _, n := range allow {
		if n.Contains(a) {
			return true
		}
	}
	return false
}
