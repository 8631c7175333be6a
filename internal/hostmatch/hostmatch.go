// Package hostmatch matches host names against the patterns an operator
// writes in egress grants and quotas: an exact name or IP literal
// ("api.example.com", "127.0.0.1", "[::1]"), "*.suffix", which matches
// any name ending in ".suffix" (not "suffix" itself), or "*", which matches
// every host (a grant for "any public host": the address checks still
// refuse private ones). Any of them may end in
// ":PORT" to match that port only. Names compare case-insensitively and a
// trailing dot is ignored.
//
// Everything here is a pure function, safe for concurrent use.
package hostmatch

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Pattern is a parsed pattern. The zero value matches nothing.
type Pattern struct {
	name     string // lower case, no trailing dot; for a wildcard, the suffix with its leading dot
	wildcard bool
	any      bool   // "*": every host
	port     string // "" means any port
}

// Parse checks and parses a pattern. It refuses an empty pattern, a "*"
// anywhere but alone or in a leading "*.", a scheme or a path, and a port
// that is not a number from 1 to 65535.
func Parse(s string) (Pattern, error) {
	raw := s
	if s == "" {
		return Pattern{}, fmt.Errorf("empty host pattern")
	}
	if strings.Contains(s, "/") {
		return Pattern{}, fmt.Errorf("host pattern %q must be a host name, not a URL (no scheme or path)", raw)
	}
	name, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		name, port = h, p
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Pattern{}, fmt.Errorf("host pattern %q: port %q is not a number from 1 to 65535", raw, p)
		}
	} else {
		name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	}
	if name == "*" { // before normalize, which would make "*." one too
		return Pattern{any: true, port: port}, nil
	}
	name = normalize(name)
	wildcard := false
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		wildcard = true
		name = "." + rest
		if rest == "" {
			return Pattern{}, fmt.Errorf("host pattern %q: \"*.\" needs a suffix, as in \"*.example.com\"", raw)
		}
	}
	if strings.Contains(name, "*") {
		return Pattern{}, fmt.Errorf("host pattern %q: \"*\" is allowed only as a leading \"*.\"", raw)
	}
	if name == "" {
		return Pattern{}, fmt.Errorf("host pattern %q has no host name", raw)
	}
	return Pattern{name: name, wildcard: wildcard, port: port}, nil
}

// MustParse is Parse for patterns known to be valid; it panics otherwise.
func MustParse(s string) Pattern {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// Match reports whether host (a name or IP literal, without brackets) and
// port (empty when unknown) match the pattern.
func (p Pattern) Match(host, port string) bool {
	if p.name == "" && !p.any {
		return false
	}
	if p.port != "" && p.port != port {
		return false
	}
	if p.any {
		return host != ""
	}
	host = normalize(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if p.wildcard {
		return len(host) > len(p.name) && strings.HasSuffix(host, p.name)
	}
	return host == p.name
}

// Specificity orders patterns that match the same host: an exact name beats
// any wildcard, a longer suffix beats a shorter one, and a pattern with a
// port beats one without; "*" is the least specific of all.
func (p Pattern) Specificity() int {
	s := 2 * len(p.name)
	if !p.wildcard && !p.any {
		s += 1 << 20
	}
	if p.port != "" {
		s++
	}
	return s
}

// String returns the pattern as written, normalized.
func (p Pattern) String() string {
	name := p.name
	if p.wildcard || p.any {
		name = "*" + name
	}
	if p.port == "" {
		return name
	}
	return net.JoinHostPort(name, p.port)
}

func normalize(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), ".")
}

// Best returns the index of the most specific pattern in ps matching host
// and port, or -1.
func Best(ps []Pattern, host, port string) int {
	best, bestS := -1, -1
	for i, p := range ps {
		if p.Match(host, port) && p.Specificity() > bestS {
			best, bestS = i, p.Specificity()
		}
	}
	return best
}
