package config

import (
	"time"
)

// Input is the [input] section: how tools' input requests (MCP
// elicitation) are kept in the client's hands between the call that asks
// and the call that answers (transport.InputOptions). Zero fields were not
// set.
type Input struct {
	// StateKeys (state_keys) sign and verify the requestState of a
	// 2026-07-28 exchange: the first signs, every one verifies, so a fleet
	// rotates by adding the new key last, moving it first once every
	// replica has it, then dropping the old. Each is a secret
	// ({env = "NAME"}, {file = "/PATH"} or, warned about, a literal) of at
	// least 32 bytes. None: each server signs with a key of its own,
	// which replicas behind one load balancer cannot share.
	StateKeys []Secret
	// StateTTL (state_ttl) is how long a requestState stays valid.
	StateTTL time.Duration
}

func (p *checker) inputSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[input]")
	if t == nil {
		return
	}
	in := &c.Input
	p.fields(path, t,
		field{"state_keys", func(path []string, v any) {
			arr, ok := v.([]any)
			if !ok || len(arr) == 0 {
				p.fail(path, `must be a non-empty list of secrets such as [{env = "TOOLHOST_INPUT_KEY"}], not %s`, describe(v))
				return
			}
			for i, e := range arr {
				if s, ok := p.secret(concat(path, []string{elemKey(i)}), e); ok {
					in.StateKeys = append(in.StateKeys, s)
				}
			}
		}},
		field{"state_ttl", func(path []string, v any) { p.duration(path, v, &in.StateTTL) }},
	)
}

// InputKeys are the [input] state keys' values, in order (after
// ResolveSecrets); nil for none or a nil Config.
func (c *Config) InputKeys() [][]byte {
	if c == nil {
		return nil
	}
	var out [][]byte
	for _, s := range c.Input.StateKeys {
		out = append(out, []byte(s.Value()))
	}
	return out
}

// InputStateTTL is [input] state_ttl; 0 (not set, or a nil Config) means
// the transport's default.
func (c *Config) InputStateTTL() time.Duration {
	if c == nil {
		return 0
	}
	return c.Input.StateTTL
}
