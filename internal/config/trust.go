package config

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Trust is the [trust] section: what `toolhost pull` trusts to have signed
// a module, and whether serve loads only modules so pulled
// (docs/PUBLISHING.md).
type Trust struct {
	// Keys (keys) are public key files (PEM, as cosign writes cosign.pub),
	// as written in the file: a relative path is relative to the config
	// file's folder. pull --key adds to them.
	Keys []string
	// TrustedRoot (trusted_root) is a Sigstore trusted root file
	// (trusted_root.json: the Fulcio, Rekor, CT log and timestamp
	// authorities' keys), needed to verify keyless bundles; relative as
	// Keys.
	TrustedRoot string
	// Identities (identities) are the keyless signers trusted: each an
	// OIDC issuer and a certificate subject, exact or a regexp.
	Identities []Identity
	// Registries ([trust.registries."PATTERN"]) are per-repository rules:
	// a repository that a pattern matches is trusted only from the rule's
	// signers, in place of Keys and Identities. PATTERN is a repository
	// (ghcr.io/acme/echo) or a prefix ending in /* (ghcr.io/acme/*, every
	// repository under ghcr.io/acme/; ghcr.io/* the whole registry); the
	// most specific pattern wins.
	Registries map[string]TrustRule
	// Require (require) is RequireAny ("any", the default: any module
	// file in the folder loads) or RequireSigned ("signed": serve loads a
	// module file only when the folder's lock file records its bytes as
	// pulled with a verified signature).
	Require string
}

// Identity is a keyless signer: the Fulcio certificate's OIDC issuer and
// its subject (the SAN: an email, a workflow URI), either exact (Subject)
// or a regular expression (SubjectRegexp), one of the two.
type Identity struct {
	Issuer, Subject, SubjectRegexp string
}

// TrustRule is one [trust.registries."PATTERN"] table: the signers the
// pattern's repositories must be signed by (at least one key or identity).
type TrustRule struct {
	Keys       []string
	Identities []Identity
}

// The values of [trust] require.
const (
	RequireAny    = "any"
	RequireSigned = "signed"
)

// RequiresSigned reports whether serve must load only signed modules. A
// nil Config does not.
func (c *Config) RequiresSigned() bool { return c != nil && c.Trust.Require == RequireSigned }

func (p *checker) trustSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[trust]")
	if t == nil {
		return
	}
	p.fields(path, t,
		field{"keys", func(path []string, v any) { c.Trust.Keys = p.keyFiles(path, v) }},
		field{"trusted_root", func(path []string, v any) {
			if s, ok := v.(string); ok && s != "" {
				c.Trust.TrustedRoot = s
			} else {
				p.fail(path, "must be the file name of a Sigstore trusted root (trusted_root.json), not %s", describe(v))
			}
		}},
		field{"identities", func(path []string, v any) { c.Trust.Identities = p.identities(path, v) }},
		field{"registries", func(path []string, v any) { c.Trust.Registries = p.trustRules(path, v) }},
		field{"require", func(path []string, v any) {
			s, ok := v.(string)
			if !ok || (s != RequireAny && s != RequireSigned) {
				p.fail(path, `must be "any" (every module file in the folder loads) or "signed" (only those the lock file records as verified), not %s`, describe(v))
				return
			}
			c.Trust.Require = s
		}},
	)
	keyless := len(c.Trust.Identities) > 0
	for _, r := range c.Trust.Registries {
		keyless = keyless || len(r.Identities) > 0
	}
	if keyless && c.Trust.TrustedRoot == "" {
		p.fail(path, "identities are checked against a Sigstore trusted root: set trusted_root (a trusted_root.json, as `cosign trusted-root create` writes it or Sigstore's TUF repository serves it)")
	}
}

func (p *checker) keyFiles(path []string, v any) []string {
	keys, ok := p.globs(v)
	if !ok {
		p.fail(path, `must be a list of public key files such as ["cosign.pub"], not %s`, describe(v))
		return nil
	}
	for _, k := range keys {
		if k == "" {
			p.fail(path, "names an empty file name")
			return nil
		}
	}
	return keys
}

// identities reads identities = [{issuer = …, subject = …}, …] (or
// [[….identities]] tables).
func (p *checker) identities(path []string, v any) []Identity {
	var elems []map[string]any
	switch x := v.(type) {
	case []map[string]any:
		elems = x
	case []any:
		for _, e := range x {
			t, ok := e.(map[string]any)
			if !ok {
				p.fail(path, `must be a list of tables such as [{issuer = "https://token.actions.githubusercontent.com", subject = "…"}], but it holds %s`, describe(e))
				return nil
			}
			elems = append(elems, t)
		}
	default:
		p.fail(path, `must be a list of tables such as [{issuer = "…", subject = "…"}], not %s`, describe(v))
		return nil
	}
	var out []Identity
	for i, t := range elems {
		ip := concat(path, []string{elemKey(i)})
		var id Identity
		str := func(dst *string) func(path []string, v any) {
			return func(path []string, v any) {
				if s, ok := v.(string); ok && s != "" {
					*dst = s
				} else {
					p.fail(path, "must be a non-empty string, not %s", describe(v))
				}
			}
		}
		p.fields(ip, t,
			field{"issuer", str(&id.Issuer)},
			field{"subject", str(&id.Subject)},
			field{"subject_regexp", str(&id.SubjectRegexp)},
		)
		switch {
		case id.Issuer == "":
			p.fail(ip, "needs issuer, the OIDC issuer of the signer's certificate (https://token.actions.githubusercontent.com, https://accounts.google.com, …)")
			continue
		case (id.Subject == "") == (id.SubjectRegexp == ""):
			p.fail(ip, "needs exactly one of subject (the certificate's subject, exact) and subject_regexp")
			continue
		}
		if id.SubjectRegexp != "" {
			if _, err := regexp.Compile(id.SubjectRegexp); err != nil {
				p.fail(concat(ip, []string{"subject_regexp"}), "%v", err)
				continue
			}
		}
		out = append(out, id)
	}
	return out
}

// TrustPatternOK reports whether pattern is a [trust.registries] key: a
// repository REGISTRY/REPO or a prefix REGISTRY[/PATH]/*, with no scheme,
// tag or digest.
func TrustPatternOK(pattern string) bool {
	base, wildcard := strings.CutSuffix(pattern, "/*")
	if base == "" || strings.Contains(base, "*") || strings.Contains(base, "//") || strings.HasSuffix(base, "/") ||
		strings.ContainsAny(base, " \t@") {
		return false
	}
	_, repo, hasRepo := strings.Cut(base, "/")
	if strings.Contains(repo, ":") {
		return false // a tag, or a scheme
	}
	return wildcard || hasRepo
}

func (p *checker) trustRules(path []string, v any) map[string]TrustRule {
	t := p.table(path, v, `[trust.registries."ghcr.io/acme/*"]`)
	if t == nil {
		return nil
	}
	out := map[string]TrustRule{}
	for _, pat := range slices.Sorted(maps.Keys(t)) {
		rp := concat(path, []string{pat})
		if !TrustPatternOK(pat) {
			p.fail(rp, "%q is not a repository pattern: write REGISTRY/REPO for one repository or REGISTRY/PREFIX/* (ghcr.io/acme/*, ghcr.io/*) for those under it", truncate(pat))
			continue
		}
		rt := p.table(rp, t[pat], `[trust.registries."`+pat+`"]`)
		if rt == nil {
			continue
		}
		var r TrustRule
		p.fields(rp, rt,
			field{"keys", func(path []string, v any) { r.Keys = p.keyFiles(path, v) }},
			field{"identities", func(path []string, v any) { r.Identities = p.identities(path, v) }},
		)
		if len(r.Keys) == 0 && len(r.Identities) == 0 {
			p.fail(rp, "names no signer: give keys, identities or both")
			continue
		}
		out[pat] = r
	}
	return out
}
