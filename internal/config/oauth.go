package config

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/toolhost/toolhost/internal/oauth"
)

// Auth is the [auth] section: how HTTP callers authenticate besides the
// static token file.
type Auth struct {
	// OAuth is the [auth.oauth] section; nil when the file has none.
	OAuth *OAuth
}

// OAuth is the [auth.oauth] section: toolhost as an OAuth 2.1 resource
// server (see package oauth for what each key does). The embedded
// oauth.Config holds every key but client_secret, which is a Secret: it
// stays redacted wherever a Config is printed, and a reference is resolved
// after parsing (see secret.go). OAuthConfig puts its value into the
// oauth.Config.
type OAuth struct {
	// Config's ClientSecret stays empty here.
	oauth.Config
	// ClientSecret is the introspection client's secret: a literal, or a
	// reference resolved by ResolveSecrets.
	ClientSecret Secret
}

// OAuthConfig returns the [auth.oauth] section as an oauth.Config, or nil
// when the file has none (or c is nil). Resource is empty when the file
// leaves it out: serve derives it from its address.
func (c *Config) OAuthConfig() *oauth.Config {
	if c == nil || c.Auth.OAuth == nil {
		return nil
	}
	return c.Auth.OAuth.config()
}

func (o *OAuth) config() *oauth.Config {
	c := o.Config
	c.RequiredScopes, c.AllowNetworks = slices.Clone(c.RequiredScopes), slices.Clone(c.AllowNetworks)
	c.ClientSecret = o.ClientSecret.Value()
	return &c
}

// authSection checks [auth] and [auth.oauth].
func (p *checker) authSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[auth.oauth]")
	p.fields(path, t, field{"oauth", func(path []string, v any) {
		ot := p.table(path, v, "[auth.oauth]")
		if ot == nil {
			return
		}
		var o OAuth
		str := func(dst *string) func([]string, any) {
			return func(path []string, v any) { *dst = p.nonEmpty(path, v) }
		}
		before := len(p.errs)
		p.fields(path, ot,
			field{"issuer", str(&o.Issuer)},
			field{"resource", str(&o.Resource)},
			field{"audience", str(&o.Audience)},
			field{"jwks_url", str(&o.JWKSURL)},
			field{"identity_claim", str(&o.IdentityClaim)},
			field{"introspection_url", str(&o.IntrospectionURL)},
			field{"client_id", str(&o.ClientID)},
			field{"client_secret", func(path []string, v any) {
				if sec, ok := p.secret(path, v); ok {
					o.ClientSecret = sec
				}
			}},
			field{"required_scopes", func(path []string, v any) {
				for _, s := range p.stringList(path, v) {
					if s == "" || strings.ContainsAny(s, " \t\"\\") {
						p.fail(path, "%q is not a scope (RFC 6749 §3.3: no spaces, quotes or backslashes)", truncate(s))
						continue
					}
					o.RequiredScopes = append(o.RequiredScopes, s)
				}
			}},
			field{"allow_networks", func(path []string, v any) { o.AllowNetworks = p.networks(path, v) }},
		)
		if len(p.errs) > before {
			return // the keys' own problems first (a misspelt issuer, say)
		}
		if o.Issuer == "" {
			p.fail(path, `needs issuer = "https://…": the authorization server whose tokens are accepted`)
			return
		}
		check := *o.config()
		if !o.ClientSecret.IsZero() {
			check.ClientSecret = "set" // a reference is resolved after parsing
		}
		if err := oauth.Check(check); err != nil {
			// Check names the key first ("jwks_url: …"): point at it.
			msg := err.Error()
			key, rest, _ := strings.Cut(msg, ": ")
			if _, ok := ot[key]; ok {
				p.fail(concat(path, []string{key}), "%s", rest)
			} else {
				p.fail(path, "%s", msg)
			}
			return
		}
		c.Auth.OAuth = &o
	}})
}

// nonEmpty checks a non-empty string.
func (p *checker) nonEmpty(path []string, v any) string {
	s, ok := v.(string)
	switch {
	case !ok:
		p.fail(path, "must be a string, not %s", describe(v))
	case strings.TrimSpace(s) == "":
		p.fail(path, "must not be empty (leave the key out instead)")
	default:
		return s
	}
	return ""
}

// networks checks a list of IP addresses or CIDR prefixes.
func (p *checker) networks(path []string, v any) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range p.stringList(path, v) {
		pfx, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				p.fail(path, "%q is not an IP address or CIDR prefix (such as \"10.0.0.0/8\" or \"::1\")", truncate(s))
				continue
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	return out
}
