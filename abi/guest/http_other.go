//go:build !wasip1

package guest

// hostRoundTrip outside WebAssembly: there is no host to ask.
func hostRoundTrip([]byte) ([]byte, error) { return nil, errNoEgress }
