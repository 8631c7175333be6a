package extism

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// keyring is hyper-mcp's get_keyring_secret(entry i64) -> i64.
//
//	kernel memory: the block at entry  hyper-mcp's KeyringEntryId JSON {"service": S, "user": U} (read)
//	result:        the offset of a new block holding the secret's bytes
//
// hyper-mcp reads the OS keyring, for the entries its config's
// allowed_secrets lists. toolhost reads no keyring: the operator maps an
// entry to a secret reference in the config file,
// [modules."MODULE.wasm".keyring."S"] U = {env = "NAME"} (or {file =
// "PATH"}), resolved at start-up; an entry not mapped stops the call
// saying which section would map it. (hyper-mcp answers an entry it does
// not allow with no bytes, which a plugin cannot tell from an empty
// secret.)
var keyring = hostFunc{"get_keyring_secret", sig(i64), sig(i64), func(_ context.Context, k *Kernel, mod api.Module, s []uint64) {
	var e struct {
		Service string `json:"service"`
		User    string `json:"user"`
	}
	if err := json.Unmarshal(k.block(s[0], "get_keyring_secret"), &e); err != nil {
		k.stop(fmt.Errorf("get_keyring_secret: the entry is not hyper-mcp's KeyringEntryId {service, user}: %v", err))
	}
	secret, ok := k.cfg.Keyring[e.Service][e.User]
	if !ok {
		name := k.cfg.Name
		if name == "" {
			name = "MODULE.wasm"
		}
		k.stop(fmt.Errorf("get_keyring_secret: the operator maps no secret to keyring entry service %q, user %q; map one with [modules.%q.keyring.%q] %s = {env = \"NAME\"} or {file = \"PATH\"} in the config file",
			e.Service, e.User, name, e.Service, tomlKey(e.User)))
	}
	s[0] = k.put(mod, []byte(secret))
}}

// tomlKey is key as a TOML key: bare when it can be, else quoted.
func tomlKey(key string) string {
	for _, c := range key {
		if !(c == '_' || c == '-' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return fmt.Sprintf("%q", key)
		}
	}
	if key == "" {
		return `""`
	}
	return key
}
