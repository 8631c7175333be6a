package config

import (
	"maps"
	"slices"
)

// keyring checks a [modules."MODULE.wasm".keyring] table: hyper-mcp's
// keyring entries, a table per service of users, each user's secret a
// reference {env = "NAME"} or {file = "PATH"}. A literal is refused: the
// point of a keyring is that the secret is not in a file that travels,
// and the start-up warning about literals would come too late for that.
func (p *checker) keyring(path []string, v any) map[string]map[string]Secret {
	services := p.table(path, v, `[`+keyString(path)+`."SERVICE"] tables of USER = {env = "NAME"}`)
	var out map[string]map[string]Secret
	for _, service := range slices.Sorted(maps.Keys(services)) {
		sp := concat(path, []string{service})
		users := p.table(sp, services[service], "["+keyString(sp)+`] USER = {env = "NAME"}`)
		for _, user := range slices.Sorted(maps.Keys(users)) {
			up := concat(sp, []string{user})
			if _, literal := users[user].(string); literal {
				p.fail(up, `must be a reference {env = "NAME"} or {file = "/run/secrets/NAME"}: a keyring secret is never written in the config file`)
				continue
			}
			s, ok := p.secret(up, users[user])
			if !ok {
				continue
			}
			if out == nil {
				out = make(map[string]map[string]Secret)
			}
			if out[service] == nil {
				out[service] = make(map[string]Secret)
			}
			out[service][user] = s
		}
	}
	return out
}

// ExtismKeyring returns each module's [modules."MODULE.wasm".keyring]
// with its secrets' values (after ResolveSecrets), by module file name,
// service and user, for host.Config.ExtismKeyring. A nil Config returns
// nil.
func (c *Config) ExtismKeyring() map[string]map[string]map[string]string {
	if c == nil {
		return nil
	}
	var out map[string]map[string]map[string]string
	for name, m := range c.Modules {
		if len(m.Keyring) == 0 {
			continue
		}
		if out == nil {
			out = make(map[string]map[string]map[string]string)
		}
		services := make(map[string]map[string]string, len(m.Keyring))
		for service, users := range m.Keyring {
			kv := make(map[string]string, len(users))
			for user, s := range users {
				kv[user] = s.Value()
			}
			services[service] = kv
		}
		out[name] = services
	}
	return out
}
