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

// IPv6 forms that carry an IPv4 address. A request to one of them can end
// at that IPv4 address (through a NAT64 or SIIT translator, a 6to4 relay,
// or a stack that still routes IPv4-compatible addresses), so each is
// judged by the address it carries.
var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")   // RFC 6052, the well-known prefix
	localNAT64 = netip.MustParsePrefix("64:ff9b:1::/48") // RFC 8215, local-use
	// localNAT64Short is the /96 form of the local-use prefix, the only one
	// whose IPv4 address sits at a known place.
	localNAT64Short = netip.MustParsePrefix("64:ff9b:1::/96")
	siit            = netip.MustParsePrefix("::ffff:0:0:0/96") // RFC 6145, IPv4-translated
	compatible      = netip.MustParsePrefix("::/96")           // RFC 4291 §2.5.5.1, deprecated
	sixTo4          = netip.MustParsePrefix("2002::/16")       // RFC 3056
	teredo          = netip.MustParsePrefix("2001::/32")       // RFC 4380
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
	if !a.Is6() {
		return ""
	}
	if teredo.Contains(a) {
		// A Teredo address names a relay and a client behind a NAT, the
		// client's address obfuscated; no public service lives there.
		return "a Teredo tunnel address"
	}
	v4, ok := embedded(a)
	if !ok {
		return "a local-use NAT64 address whose IPv4 address cannot be read"
	}
	if v4.IsValid() {
		if what := Classify(v4); what != "" {
			return what + " (inside a translated IPv6 address)"
		}
	}
	return ""
}

// embedded returns the IPv4 address an IPv6 address carries, or the zero
// Addr when it carries none. ok is false for a local-use NAT64 address
// that is not in the /96 form: RFC 8215 lets a network place the IPv4
// address at any RFC 6052 position inside the /48, and guessing the
// wrong one could pass a private address for a public one, so it is
// refused rather than read.
func embedded(a netip.Addr) (v4 netip.Addr, ok bool) {
	b := a.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case nat64.Contains(a), siit.Contains(a), compatible.Contains(a):
		return last, true
	case localNAT64.Contains(a):
		if !localNAT64Short.Contains(a) {
			return netip.Addr{}, false
		}
		return last, true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, true
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
