package oauth

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// wellKnownPRM is RFC 9728's well-known path.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// MetadataURL is where the Protected Resource Metadata of the resource is:
// the well-known path inserted between its host and its path (RFC 9728
// §3.1), as a 401's resource_metadata names it.
func (v *Verifier) MetadataURL() string {
	return origin(v.cfg.Resource) + wellKnownPRM + resourcePath(v.cfg.Resource)
}

// Metadata is the Protected Resource Metadata document (RFC 9728 §2) for
// resource: the issuer as its one authorization server, the required
// scopes, bearer tokens in the Authorization header only.
func (v *Verifier) Metadata(resource string) *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               resource,
		AuthorizationServers:   []string{v.cfg.Issuer},
		ScopesSupported:        v.RequiredScopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolhost",
	}
}

// MetadataHandlers returns the Protected Resource Metadata endpoints to
// mount, by path: the path-suffixed document for the resource itself
// ("/.well-known/oauth-protected-resource/mcp"), and at the bare
// well-known path one for the resource's origin, as RFC 9728 §3.3 wants a
// document's resource to be the identifier its URL was built from (the
// Verifier accepts tokens for either).
func (v *Verifier) MetadataHandlers() map[string]http.Handler {
	out := map[string]http.Handler{
		wellKnownPRM: auth.ProtectedResourceMetadataHandler(v.Metadata(origin(v.cfg.Resource))),
	}
	if p := resourcePath(v.cfg.Resource); p != "" {
		out[wellKnownPRM+p] = auth.ProtectedResourceMetadataHandler(v.Metadata(v.cfg.Resource))
	}
	return out
}

// resourcePath is the resource URL's path without a trailing slash.
func resourcePath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.EscapedPath(), "/")
}

// Challenge returns the status and WWW-Authenticate header to refuse a
// request with: err is what Verify returned, or nil when the request
// carried no token (401 pointing at the metadata, RFC 9728 §5.1, with the
// scopes to ask for). An invalid token adds error="invalid_token" (401),
// missing scopes error="insufficient_scope" (403, RFC 6750 §3.1), and an
// issuer that could not be asked is 503.
func (v *Verifier) Challenge(err error) (int, string) {
	params := []string{`resource_metadata="` + v.MetadataURL() + `"`}
	scopes := v.cfg.RequiredScopes
	status := http.StatusUnauthorized
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case CodeInsufficientScope:
			status = http.StatusForbidden
		case CodeUnavailable:
			return http.StatusServiceUnavailable, ""
		}
		params = append([]string{`error="` + e.Code + `"`, `error_description="` + quotable(e.Description) + `"`}, params...)
	} else if err != nil {
		params = append([]string{`error="` + CodeInvalidToken + `"`}, params...)
	}
	if len(scopes) > 0 {
		params = append(params, `scope="`+quotable(strings.Join(scopes, " "))+`"`)
	}
	return status, "Bearer " + strings.Join(params, ", ")
}

// quotable keeps the characters RFC 6750 §3 allows in error_description
// and scope (printable ASCII but '"' and '\'), replacing others.
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
