package config

// HTTP is the [http] section: what one client may hold of serve's HTTP
// listener. Each key is also a `toolhost serve` flag of the same name
// (max_conns_per_peer: --max-conns-per-peer); a flag given on the command
// line wins over the file. A nil field was not set.
type HTTP struct {
	// MaxConnsPerPeer (max_conns_per_peer) is the most connections one
	// client address (an IPv4 address or an IPv6 /64) holds at once. 0 is
	// no limit.
	MaxConnsPerPeer *int
}

func (p *checker) httpSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[http]")
	if t == nil {
		return
	}
	p.fields(path, t,
		field{"max_conns_per_peer", func(path []string, v any) { p.countOrNone(path, v, &c.HTTP.MaxConnsPerPeer) }},
	)
}
