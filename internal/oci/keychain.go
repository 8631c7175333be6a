package oci

import (
	"github.com/google/go-containerregistry/pkg/authn"
)

// Credentials are one registry's credentials from the config file: a
// username and password, or an identity token.
type Credentials struct {
	Username, Password string
	IdentityToken      string
}

// configKeychain answers for the registries it holds and asks fallback
// about the others.
type configKeychain struct {
	creds    map[string]Credentials
	fallback authn.Keychain
}

// ConfigKeychain returns a keychain that uses creds for their registries
// (by host or host:port, as written in references) and fallback for any
// other (nil: the Docker config file, as authn.DefaultKeychain reads it).
func ConfigKeychain(creds map[string]Credentials, fallback authn.Keychain) authn.Keychain {
	if fallback == nil {
		fallback = authn.DefaultKeychain
	}
	return configKeychain{creds: creds, fallback: fallback}
}

// Resolve implements authn.Keychain.
func (k configKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	c, ok := k.creds[r.RegistryStr()]
	if !ok {
		return k.fallback.Resolve(r)
	}
	return authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password, IdentityToken: c.IdentityToken}), nil
}
