package config

import (
	"maps"
	"slices"
	"strings"
)

// Registry is one [registries."HOST"] table: how toolhost pull and push
// reach the OCI registry HOST (a host or host:port, as written in an
// oci:// reference). Credentials given here are used for HOST in place of
// the Docker config file's.
type Registry struct {
	// Username and Password (username, password) are basic credentials;
	// Password is usually a registry token ({env = "GHCR_TOKEN"}).
	Username string
	Password Secret
	// Token (token) is an identity token the registry exchanges for an
	// access token (what `docker login` stores as identitytoken), instead
	// of a username and password.
	Token Secret
	// Insecure (insecure) lets pull and push reach HOST over plain HTTP,
	// which only loopback registries may otherwise be.
	Insecure bool
}

// InsecureRegistries are the registries [registries] lets be reached
// over plain HTTP, sorted. A nil Config has none.
func (c *Config) InsecureRegistries() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, host := range slices.Sorted(maps.Keys(c.Registries)) {
		if c.Registries[host].Insecure {
			out = append(out, host)
		}
	}
	return out
}

func (p *checker) registries(path []string, v any, c *Config) {
	t := p.table(path, v, `[registries."ghcr.io"]`)
	if t == nil {
		return
	}
	for _, host := range slices.Sorted(maps.Keys(t)) {
		hp := concat(path, []string{host})
		if host == "" || strings.ContainsAny(host, "/ \t@") || strings.Contains(host, "://") {
			p.fail(hp, "%q is not a registry host (a host or host:port, as in oci://HOST/REPO, without a scheme or path)", truncate(host))
			continue
		}
		rt := p.table(hp, t[host], `[registries."`+host+`"]`)
		if rt == nil {
			continue
		}
		var r Registry
		var insecure *bool
		p.fields(hp, rt,
			field{"username", func(path []string, v any) {
				if s, ok := v.(string); ok && s != "" {
					r.Username = s
				} else {
					p.fail(path, "must be a non-empty string, not %s", describe(v))
				}
			}},
			field{"password", func(path []string, v any) { r.Password, _ = p.secret(path, v) }},
			field{"token", func(path []string, v any) { r.Token, _ = p.secret(path, v) }},
			field{"insecure", func(path []string, v any) { p.flag(path, v, &insecure) }},
		)
		r.Insecure = insecure != nil && *insecure
		switch {
		case !r.Token.IsZero() && (r.Username != "" || !r.Password.IsZero()):
			p.fail(hp, "give either token or username and password, not both")
		case r.Username != "" && r.Password.IsZero(), r.Username == "" && !r.Password.IsZero():
			p.fail(hp, "username and password go together")
		}
		if c.Registries == nil {
			c.Registries = map[string]Registry{}
		}
		c.Registries[host] = r
	}
}
