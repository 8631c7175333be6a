package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// discovery finds the issuer's metadata (RFC 8414, then OpenID Connect
// Discovery) once and keeps it: the documents it reads name endpoints,
// which change rarely, and the keys they lead to are refreshed by keySet.
type discovery struct {
	issuer string
	fetch  *fetcher

	mu   sync.Mutex
	meta *oauthex.AuthServerMeta
}

// metadataURLs are where an issuer's metadata may be, in the order the MCP
// spec (2025-11-25, "Authorization Server Metadata Discovery") tries them:
// RFC 8414's well-known path inserted before the issuer's path, OpenID
// Connect's inserted, then OpenID Connect's appended.
func metadataURLs(issuer string) []string {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil
	}
	path := strings.TrimSuffix(u.Path, "/")
	base := u.Scheme + "://" + u.Host
	urls := []string{base + "/.well-known/oauth-authorization-server" + path}
	if path == "" {
		return append(urls, base+"/.well-known/openid-configuration")
	}
	return append(urls, base+"/.well-known/openid-configuration"+path, base+path+"/.well-known/openid-configuration")
}

// get returns the issuer's metadata, fetching it the first time. The
// lock is not held while it fetches: a caller never waits behind another's
// fetch (the key set's single refresh is the only caller that fetches). A
// document for another issuer is refused (RFC 8414 §3.3: it could be an
// impersonation).
func (d *discovery) get(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	d.mu.Lock()
	meta := d.meta
	d.mu.Unlock()
	if meta != nil {
		return meta, nil
	}
	m, err := d.find(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.meta == nil {
		d.meta = m
	}
	return d.meta, nil
}

// find tries the metadata URLs in order.
func (d *discovery) find(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	var errs []error
	for _, u := range metadataURLs(d.issuer) {
		var m oauthex.AuthServerMeta
		err := d.fetch.getJSON(ctx, u, MaxFetchBytes, &m)
		var se *statusError
		if errors.As(err, &se) && se.status >= 400 && se.status < 500 {
			errs = append(errs, err)
			continue // not there: try the next place
		}
		if err != nil {
			return nil, err
		}
		if m.Issuer != d.issuer {
			return nil, fmt.Errorf("%s names issuer %q, not the configured %q (RFC 8414 §3.3)", u, m.Issuer, d.issuer)
		}
		return &m, nil
	}
	return nil, fmt.Errorf("no authorization server metadata for issuer %s: %w", d.issuer, errors.Join(errs...))
}

// jwksURI is the issuer's jwks_uri, checked against the fetch rules.
func (d *discovery) jwksURI(ctx context.Context) (string, error) {
	m, err := d.get(ctx)
	if err != nil {
		return "", err
	}
	if m.JWKSURI == "" {
		return "", fmt.Errorf("the metadata of issuer %s has no jwks_uri (set jwks_url, or introspection_url for opaque tokens)", d.issuer)
	}
	if err := d.fetch.checkURL(m.JWKSURI); err != nil {
		return "", fmt.Errorf("jwks_uri: %w", err)
	}
	return m.JWKSURI, nil
}
