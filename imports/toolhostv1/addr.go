package toolhostv1

import (
	"fmt"
	"net/netip"
	"syscall"

	"github.com/toolhost/toolhost/internal/netguard"
)

// classify says what kind of non-public address a is, or "" for a public
// one (the table is shared with the OAuth fetches: see netguard).
func classify(a netip.Addr) string { return netguard.Classify(a) }

// addressDenied is a dial the grant does not allow.
type addressDenied struct {
	addr netip.Addr
	what string
}

func (e *addressDenied) Error() string {
	return fmt.Sprintf("address %s is %s", e.addr, e.what)
}

// checkDial is the dialer's Control function: it sees the address actually
// being connected to, after name resolution, for every attempt (each
// address a name resolves to, each redirect), so neither a name that
// resolves to a private address nor DNS rebinding gets past it.
func (g *grant) checkDial(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &addressDenied{what: "not an IP address: " + address}
	}
	a := ap.Addr().Unmap().WithZone("")
	what := classify(a)
	if what == "" || netguard.Allowed(a, g.networks) {
		return nil
	}
	return &addressDenied{addr: a, what: what}
}
