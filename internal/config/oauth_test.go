package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func TestOAuthSection(t *testing.T) {
	c, err := Parse("t.toml", []byte(`
[auth.oauth]
issuer = "https://issuer.example.com"
resource = "https://tools.example.com/mcp"
audience = "api://toolhost"
required_scopes = ["tools:call"]
identity_claim = "email"
introspection_url = "https://issuer.example.com/introspect"
client_id = "toolhost"
client_secret = "s3cret"
allow_networks = ["10.0.0.0/8", "::1"]
`))
	if err != nil {
		t.Fatal(err)
	}
	o := c.OAuthConfig()
	if o == nil || o.Issuer != "https://issuer.example.com" || o.Resource != "https://tools.example.com/mcp" ||
		o.Audience != "api://toolhost" || !slices.Equal(o.RequiredScopes, []string{"tools:call"}) || o.IdentityClaim != "email" ||
		o.IntrospectionURL != "https://issuer.example.com/introspect" || o.ClientID != "toolhost" || o.ClientSecret != "s3cret" ||
		!slices.Equal(o.AllowNetworks, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}) {
		t.Fatalf("%+v", o)
	}
	if none, _ := Parse("t.toml", []byte("[dispatch]\nconcurrency = 2\n")); none.OAuthConfig() != nil {
		t.Fatal("OAuthConfig without [auth.oauth] is not nil")
	}
	// A loopback issuer over http is fine once allow_networks lists it.
	if _, err := Parse("t.toml", []byte("[auth.oauth]\nissuer = \"http://127.0.0.1:9000\"\nallow_networks = [\"127.0.0.1\"]\n")); err != nil {
		t.Fatal(err)
	}
}

func TestOAuthSectionErrors(t *testing.T) {
	for _, tt := range []struct {
		src, want string
	}{
		{"[auth.oauth]\nisuer = \"https://i.example.com\"\n", `t.toml:2: auth.oauth.isuer: unknown key "isuer" in [auth.oauth]; did you mean "issuer"?`},
		{"[auth]\noath = {}\n", `t.toml:2: auth.oath: unknown key "oath" in [auth]; did you mean "oauth"?`},
		{"[auth.oauth]\nrequired_scopes = [\"a\"]\n", `t.toml:1: auth.oauth: needs issuer = "https://…"`},
		{"[auth.oauth]\nissuer = \"\"\n", `t.toml:2: auth.oauth.issuer: must not be empty`},
		{"[auth.oauth]\nissuer = 7\n", `t.toml:2: auth.oauth.issuer: must be a string, not the integer 7`},
		{"[auth.oauth]\n\nissuer = \"http://issuer.example.com\"\n", `t.toml:3: auth.oauth.issuer: "http://issuer.example.com": use https`},
		{"[auth.oauth]\nissuer = \"http://127.0.0.1:9000\"\n", `t.toml:2: auth.oauth.issuer: "http://127.0.0.1:9000": use https (plain http is accepted only for a loopback address listed in allow_networks)`},
		{"[auth.oauth]\nissuer = \"https://i.example.com\"\nresource = \"tools.example.com\"\n", `t.toml:3: auth.oauth.resource: "tools.example.com" is not an absolute http(s) URL`},
		{"[auth.oauth]\nissuer = \"https://i.example.com\"\nintrospection_url = \"https://i.example.com/in\"\n", `t.toml:1: auth.oauth: introspection_url needs client_id and client_secret`},
		{"[auth.oauth]\nissuer = \"https://i.example.com\"\nrequired_scopes = [\"a b\"]\n", `t.toml:3: auth.oauth.required_scopes: "a b" is not a scope`},
		{"[auth.oauth]\nissuer = \"https://i.example.com\"\nallow_networks = [\"intranet\"]\n", `t.toml:3: auth.oauth.allow_networks: "intranet" is not an IP address or CIDR prefix`},
		{"[auth.oauth]\nissuer = \"https://i.example.com\"\njwks_url = \"ftp://i.example.com/k\"\n", `t.toml:3: auth.oauth.jwks_url: "ftp://i.example.com/k": the scheme must be https`},
	} {
		_, err := Parse("t.toml", []byte(tt.src))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q:\n got %v\nwant %s…", tt.src, err, tt.want)
		}
	}
}

// TestOAuthDocExamples keeps the [auth.oauth] examples of docs/CONFIG.md
// valid. They are fenced as "toml oauth", which TestDocExamples skips.
func TestOAuthDocExamples(t *testing.T) {
	blocks := configDocExamples(t, "oauth")
	if len(blocks) == 0 {
		t.Fatal("no [auth.oauth] examples in docs/CONFIG.md")
	}
	for i, b := range blocks {
		c, err := Parse("CONFIG.md", b[1])
		if err != nil {
			t.Errorf("oauth example %d: %v", i+1, err)
		} else if c.OAuthConfig() == nil {
			t.Errorf("oauth example %d has no [auth.oauth]", i+1)
		}
	}
}

// client_secret may be a reference, resolved with the other secrets; a
// literal one is listed for the start-up warning; a missing one refuses
// the start naming the key, never a value.
func TestOAuthClientSecretByReference(t *testing.T) {
	src := "[auth.oauth]\nissuer = \"https://i.example.com\"\nintrospection_url = \"https://i.example.com/in\"\nclient_id = \"rs\"\nclient_secret = {env = \"RS_SECRET\"}\n"
	c, err := Parse("t.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LiteralSecrets()) != 0 {
		t.Fatalf("a reference listed as a literal: %v", c.LiteralSecrets())
	}
	env := map[string]string{"RS_SECRET": "from-the-environment"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if err := c.resolveSecrets(getenv, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.OAuthConfig().ClientSecret; got != "from-the-environment" {
		t.Fatalf("client secret %q", got)
	}
	c, _ = Parse("t.toml", []byte(src))
	err = c.resolveSecrets(func(string) (string, bool) { return "", false }, nil)
	if err == nil || !strings.Contains(err.Error(), "t.toml:5: auth.oauth.client_secret: environment variable RS_SECRET is not set") {
		t.Fatalf("missing secret: %v", err)
	}
	lit, err := Parse("t.toml", []byte(strings.Replace(src, `{env = "RS_SECRET"}`, `"plain-secret"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if ls := lit.LiteralSecrets(); len(ls) != 1 || ls[0].Key() != "auth.oauth.client_secret" || strings.Contains(ls[0].String(), "plain-secret") {
		t.Fatalf("literal secrets %v", ls)
	}
}
