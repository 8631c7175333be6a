package config

// Trust is the [trust] section: what `toolhost pull` trusts to have signed
// a module, and whether serve loads only modules so pulled
// (docs/PUBLISHING.md).
type Trust struct {
	// Keys (keys) are public key files (PEM, as cosign writes cosign.pub),
	// as written in the file: a relative path is relative to the config
	// file's folder (ResolveKeys). pull --key adds to them.
	Keys []string
	// Require (require) is RequireAny ("any", the default: any module
	// file in the folder loads) or RequireSigned ("signed": serve loads a
	// module file only when the folder's lock file records its bytes as
	// pulled with a verified signature).
	Require string
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
		field{"keys", func(path []string, v any) {
			keys, ok := p.globs(v)
			if !ok {
				p.fail(path, `must be a list of public key files such as ["cosign.pub"], not %s`, describe(v))
				return
			}
			for _, k := range keys {
				if k == "" {
					p.fail(path, "names an empty file name")
					return
				}
			}
			c.Trust.Keys = keys
		}},
		field{"require", func(path []string, v any) {
			s, ok := v.(string)
			if !ok || (s != RequireAny && s != RequireSigned) {
				p.fail(path, `must be "any" (every module file in the folder loads) or "signed" (only those the lock file records as verified), not %s`, describe(v))
				return
			}
			c.Trust.Require = s
		}},
	)
}
