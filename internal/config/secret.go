package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
)

// Secret is a secret value from the config file: a literal, or a reference
// {env = "NAME"} or {file = "/run/secrets/x"} resolved at start-up. Every
// way of printing it (String, GoString, MarshalJSON, LogValue) redacts the
// value and says only where it came from, so a Secret can be logged, put in
// an error or encoded without leaking; Value is the one way to the value.
// A Secret is a value type, safe for concurrent reads.
type Secret struct {
	value  string
	source SecretSource
	ref    string // the variable's name or the file's path
	key    string // the config key, for messages
	file   string // the config file, for messages
	pos    keyPos
}

// SecretSource is where a Secret comes from.
type SecretSource string

// The sources.
const (
	SecretLiteral SecretSource = "literal"
	SecretEnv     SecretSource = "env"
	SecretFile    SecretSource = "file"
)

// LiteralSecret wraps a value given as a plain string (a flag, or a
// config key that took a string before secrets by reference existed).
func LiteralSecret(value string) Secret { return Secret{value: value, source: SecretLiteral} }

// Value is the secret itself: empty until the Config's ResolveSecrets for
// a reference.
func (s Secret) Value() string { return s.value }

// Source says where the secret comes from ("" for the zero Secret).
func (s Secret) Source() SecretSource { return s.source }

// Ref is the environment variable's name or the file's path ("" for a
// literal).
func (s Secret) Ref() string { return s.ref }

// Key is the config key the secret was read from ("" if none).
func (s Secret) Key() string { return s.key }

// IsZero reports whether the secret was never set.
func (s Secret) IsZero() bool { return s.source == "" }

// String describes the secret without its value: "[secret from env
// API_TOKEN]", "[secret from file /run/secrets/x]" or "[secret]".
func (s Secret) String() string {
	switch s.source {
	case SecretEnv, SecretFile:
		return "[secret from " + string(s.source) + " " + s.ref + "]"
	}
	return "[secret]"
}

// GoString redacts as String does (for %#v).
func (s Secret) GoString() string { return s.String() }

// MarshalJSON encodes String's description, never the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf("%q", s.String())), nil }

// LogValue logs String's description, never the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MaxSecretFileBytes bounds a secret file: a larger one is the wrong file.
const MaxSecretFileBytes = 64 << 10

// resolve reads a reference's value with getenv and open (os.LookupEnv and
// os.Open in ResolveSecrets). A literal resolves to itself.
func (s *Secret) resolve(getenv func(string) (string, bool), open func(string) (io.ReadCloser, error)) error {
	switch s.source {
	case SecretEnv:
		v, ok := getenv(s.ref)
		switch {
		case !ok:
			return fmt.Errorf("environment variable %s is not set", s.ref)
		case v == "":
			return fmt.Errorf("environment variable %s is empty", s.ref)
		}
		s.value = v
	case SecretFile:
		f, err := open(s.ref)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return fmt.Errorf("cannot read secret file %s: %v", s.ref, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, MaxSecretFileBytes+1))
		switch {
		case err != nil:
			return fmt.Errorf("cannot read secret file %s: %v", s.ref, err)
		case len(b) > MaxSecretFileBytes:
			return fmt.Errorf("secret file %s is over %d bytes; is it the right file?", s.ref, MaxSecretFileBytes)
		}
		// Files made with echo end in a newline that is not part of the
		// secret.
		v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if v == "" {
			return fmt.Errorf("secret file %s is empty", s.ref)
		}
		s.value = v
	}
	return nil
}

// secret checks a secret value at path: a string (a literal), or a table
// with exactly one of env (a variable name) or file (an absolute path).
func (p *checker) secret(path []string, v any) (Secret, bool) {
	at := p.keys[keyString(path)]
	if s, ok := v.(string); ok {
		return Secret{value: s, source: SecretLiteral, key: keyString(path), file: p.file, pos: at}, true
	}
	t, ok := v.(map[string]any)
	if !ok {
		p.fail(path, `must be a string or a reference {env = "NAME"} or {file = "/run/secrets/NAME"}, not %s`, describe(v))
		return Secret{}, false
	}
	if len(t) != 1 {
		p.fail(path, `a secret reference has exactly one key, env or file, as in {env = "API_TOKEN"}`)
		return Secret{}, false
	}
	for ref, rv := range t {
		name, isString := rv.(string)
		switch {
		case ref != "env" && ref != "file":
			if s := suggest(ref, []string{"env", "file"}); s != "" {
				p.fail(concat(path, []string{ref}), "unknown key %q in a secret reference; did you mean %q?", ref, s)
			} else {
				p.fail(concat(path, []string{ref}), "unknown key %q in a secret reference (known keys: env, file)", ref)
			}
		case !isString || name == "":
			p.fail(concat(path, []string{ref}), "must be a non-empty string, not %s", describe(rv))
		case ref == "env" && !validEnvName(name):
			p.fail(concat(path, []string{ref}), "%q is not an environment variable name (letters, digits and _, not starting with a digit)", truncate(name))
		case ref == "file" && !strings.HasPrefix(name, "/"):
			p.fail(concat(path, []string{ref}), "%q is not an absolute path (the server's working directory is no place to look for secrets)", truncate(name))
		default:
			return Secret{source: SecretSource(ref), ref: name, key: keyString(path), file: p.file, pos: at}, true
		}
	}
	return Secret{}, false
}

func validEnvName(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// ResolveSecrets reads every secret reference in the file (environment
// variables, files) in place. The first that cannot be read (an unset or
// empty variable, a missing, unreadable or empty file) is an *Error naming
// its key and line, never a value. Parse leaves references unresolved so
// that commands which only read the config (access check) need no secrets.
// A nil Config has none.
func (c *Config) ResolveSecrets() error {
	return c.resolveSecrets(os.LookupEnv, func(path string) (io.ReadCloser, error) { return os.Open(path) })
}

func (c *Config) resolveSecrets(getenv func(string) (string, bool), open func(string) (io.ReadCloser, error)) error {
	var first *Error
	c.eachSecret(func(s *Secret, multiline bool) {
		if first != nil {
			return
		}
		err := s.resolve(getenv, open)
		switch {
		case err != nil:
		case strings.ContainsRune(s.value, 0):
			err = fmt.Errorf("the secret from %s %s holds a NUL byte", s.source, s.ref)
		case !multiline && strings.ContainsAny(s.value, "\r\n"):
			err = fmt.Errorf("the secret from %s %s holds a line break, which no header value may", s.source, s.ref)
		}
		if err != nil {
			s.value = ""
		}
		if err != nil {
			first = &Error{File: s.file, Line: s.pos.line, Reason: s.key + ": " + err.Error(), Err: err}
		}
	})
	if first != nil {
		return first
	}
	return nil
}

// LiteralSecrets returns the secrets written in the file as plain strings,
// in file order, for a start-up warning naming their keys: a secret in the
// config file travels wherever the file does.
func (c *Config) LiteralSecrets() []Secret {
	var out []Secret
	c.eachSecret(func(s *Secret, _ bool) {
		if s.source == SecretLiteral {
			out = append(out, *s)
		}
	})
	return out
}

// Line is the config line the secret was written on (0 if unknown).
func (s Secret) Line() int { return s.pos.line }

// eachSecret calls fn on every Secret of the config, in file order, and
// stores what fn leaves in it. multiline is true for the secrets a plugin
// reads as bytes (extism_config, keyring: a PEM key is one); the rest end
// up in a header, a form or a key, where a line break would split or
// change the value.
func (c *Config) eachSecret(fn func(s *Secret, multiline bool)) {
	if c == nil {
		return
	}
	type slot struct {
		kv        map[string]Secret
		name      string
		multiline bool
	}
	var all []slot
	for _, g := range c.Grants {
		for _, kv := range g.Headers {
			for name := range kv {
				all = append(all, slot{kv, name, false})
			}
		}
	}
	for _, m := range c.Modules {
		for name := range m.ExtismConfig {
			all = append(all, slot{m.ExtismConfig, name, true})
		}
		for _, users := range m.Keyring {
			for name := range users {
				all = append(all, slot{users, name, true})
			}
		}
	}
	if o := c.Auth.OAuth; o != nil && !o.ClientSecret.IsZero() {
		kv := map[string]Secret{"client_secret": o.ClientSecret}
		all = append(all, slot{kv, "client_secret", false})
		defer func() { o.ClientSecret = kv["client_secret"] }()
	}
	for host, r := range c.Registries {
		kv := map[string]Secret{}
		for name, s := range map[string]Secret{"password": r.Password, "token": r.Token} {
			if !s.IsZero() {
				kv[name] = s
				all = append(all, slot{kv, name, false})
			}
		}
		defer func() {
			r.Password, r.Token = kv["password"], kv["token"]
			c.Registries[host] = r
		}()
	}
	for i := range c.Input.StateKeys {
		kv := map[string]Secret{"k": c.Input.StateKeys[i]}
		all = append(all, slot{kv, "k", false})
		defer func() { c.Input.StateKeys[i] = kv["k"] }()
	}
	slices.SortFunc(all, func(a, b slot) int {
		return cmp.Or(cmp.Compare(a.kv[a.name].pos.off, b.kv[b.name].pos.off), cmp.Compare(a.kv[a.name].key, b.kv[b.name].key))
	})
	for _, sl := range all {
		s := sl.kv[sl.name]
		fn(&s, sl.multiline)
		sl.kv[sl.name] = s
	}
}
