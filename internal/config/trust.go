package config

// Trust is the [trust] section: what `toolhost pull` trusts to have signed
// a module (docs/PUBLISHING.md). It is config-side because the one reader
// is a command (pull), not a layer of the server.
type Trust struct {
	// Keys (keys) are public key files (PEM, as cosign writes cosign.pub),
	// as written in the file: a relative path is relative to the config
	// file's folder (ResolveKeys). pull --key adds to them.
	Keys []string
}

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
	)
}
