package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// maxReferrerPages bounds the pages of one referrers list a pull reads
// (the OCI distribution spec lets a registry split the list with
// Link: <URL>; rel="next", as tag listing). Each page is capped at
// Options.MaxManifest, and only one page is held at a time, so a list
// costs at most 16 requests and 16 caps of bytes read.
const maxReferrerPages = 16

// referrers lists the manifests that refer to digest and hands them to
// visit a page at a time, until visit says it is done (a bundle
// verified, or enough were looked at) or the list ends. The list is the
// registry's referrers API, following its rel="next" links on the
// registry's own scheme and host only; else (a registry without the API
// answers 404) the referrers tag scheme's index, one page; none when
// neither exists.
//
// A list that goes on past maxReferrerPages fails with ErrTooLarge
// rather than ending as if it were complete: either way the pull is
// refused, but "no bundle by a trusted signer" would be a verdict on
// the artifact that nobody reached. A next link that cannot be followed
// (it does not parse, leaves the registry, or returns to a page read)
// fails with ErrNoSignature, as a referrers index that is not JSON does:
// the registry's answer cannot be read to its end.
func (c *Client) referrers(f fetcher, digest string, visit func([]referrer) (done bool, err error)) error {
	next := f.url("referrers", digest)
	read := map[string]bool{}
	for page := 1; next != ""; page++ {
		if page > maxReferrerPages {
			return fail(f.s, ErrTooLarge, "the registry's referrers list goes on past %d pages (Link rel=\"next\") with no signature by a trusted signer on them", maxReferrerPages)
		}
		read[next] = true
		resp, err := f.get(next, ociIndex)
		if err != nil {
			if page == 1 && noReferrersAPI(err) {
				return c.referrersTag(f, digest, visit)
			}
			return c.wrap(f.ctx, f.s, err)
		}
		raw, err := f.readCapped(resp.Body, c.opts.maxManifest(), "referrers index")
		resp.Body.Close()
		if err != nil {
			return c.wrap(f.ctx, f.s, err)
		}
		refs, err := decodeReferrers(f.s, raw)
		if err != nil {
			return err
		}
		if done, err := visit(refs); done || err != nil {
			return err
		}
		if next, err = f.nextPage(resp, next, read); err != nil {
			return err
		}
	}
	return nil
}

// noReferrersAPI reports whether err is how a registry without the
// referrers API answers a request for it.
func noReferrersAPI(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	switch te.StatusCode {
	case http.StatusNotFound, http.StatusBadRequest, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return true
	}
	return false
}

// referrersTag visits the index in the referrers tag sha256-HEX.
func (c *Client) referrersTag(f fetcher, digest string, visit func([]referrer) (bool, error)) error {
	raw, _, _, err := f.manifest(strings.Replace(digest, ":", "-", 1), "", c.opts.maxManifest())
	if err != nil {
		if err = c.wrap(f.ctx, f.s, err); errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	refs, err := decodeReferrers(f.s, raw)
	if err != nil {
		return err
	}
	_, err = visit(refs)
	return err
}

func decodeReferrers(s string, raw []byte) ([]referrer, error) {
	var idx referrersIndex
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, &Error{Ref: s, Kind: ErrNoSignature, Detail: "the referrers index is not JSON", Err: err}
	}
	return idx.Manifests, nil
}

// nextPage returns the URL of the page after the one resp answered
// (requested as asked), "" at the end of the list. A relative link is
// resolved against the URL that answered (after any redirect), and must
// land on the registry's scheme and host: the page is fetched with the
// registry's credential, and a link elsewhere would be a request the
// registry chose to any host it likes.
func (f fetcher) nextPage(resp *http.Response, asked string, read map[string]bool) (string, error) {
	target, err := nextLink(resp.Header.Values("Link"))
	if err != nil {
		return "", &Error{Ref: f.s, Kind: ErrNoSignature, Detail: fmt.Sprintf("the referrers list's Link header %q", strings.Join(resp.Header.Values("Link"), ", ")), Err: err}
	}
	if target == "" {
		return "", nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", &Error{Ref: f.s, Kind: ErrNoSignature, Detail: fmt.Sprintf("the referrers list's next page %q", target), Err: err}
	}
	base, err := url.Parse(asked)
	if err != nil {
		return "", err
	}
	if resp.Request != nil && resp.Request.URL != nil {
		base = resp.Request.URL
	}
	u = base.ResolveReference(u)
	u.Fragment, u.RawFragment = "", ""
	reg := f.ref.ref.Context().Registry
	if u.Scheme != reg.Scheme() || u.User != nil || canonicalHost(u.Host, u.Scheme) != canonicalHost(reg.RegistryStr(), reg.Scheme()) {
		return "", fail(f.s, ErrNoSignature, "the referrers list's next page is %s, not on the registry (%s://%s): not followed", u.Redacted(), reg.Scheme(), reg.RegistryStr())
	}
	next := u.String()
	if read[next] {
		return "", fail(f.s, ErrNoSignature, "the referrers list's next page %s is one already read (a loop)", next)
	}
	return next, nil
}

// canonicalHost is host in lower case without the scheme's default port.
func canonicalHost(host, scheme string) string {
	host = strings.ToLower(host)
	if h, port, err := net.SplitHostPort(host); err == nil && (scheme == "https" && port == "443" || scheme == "http" && port == "80") {
		return h
	}
	return host
}

// nextLink returns the target of the first link whose relation types
// include "next" among Link header values (RFC 8288 section 3: link-values
// separated by commas, each a <URI-Reference> and ;-separated parameters,
// a parameter's value a token or a quoted string; only a link's first rel
// counts, and it may hold several space-separated types), "" when none.
// The standard library has no Link parser and nothing in the module graph
// exports one (go-containerregistry's, for tag listing, is unexported and
// reads only the first link, whatever its rel).
func nextLink(values []string) (string, error) {
	for _, v := range values {
		for {
			v = strings.TrimLeft(v, " \t,")
			if v == "" {
				break
			}
			if v[0] != '<' {
				return "", fmt.Errorf("a link does not start with '<' at %q", v)
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				return "", errors.New("a link's '<' has no '>'")
			}
			target := v[1:end]
			v = v[end+1:]
			var isNext, relSeen bool
			for {
				v = strings.TrimLeft(v, " \t")
				if v == "" || v[0] == ',' {
					break
				}
				if v[0] != ';' {
					return "", fmt.Errorf("want ';' or ',' at %q", v)
				}
				var name, value string
				var err error
				if name, value, v, err = linkParam(v[1:]); err != nil {
					return "", err
				}
				if strings.EqualFold(name, "rel") && !relSeen {
					relSeen = true
					for _, t := range strings.Fields(value) {
						isNext = isNext || strings.EqualFold(t, "next")
					}
				}
			}
			if isNext {
				return target, nil
			}
		}
	}
	return "", nil
}

// linkParam reads one parameter (name, optional =value) from the start
// of s and returns what follows it.
func linkParam(s string) (name, value, rest string, err error) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, "=;, \t")
	if i < 0 {
		i = len(s)
	}
	name, s = s[:i], strings.TrimLeft(s[i:], " \t")
	if name == "" {
		return "", "", "", fmt.Errorf("a link parameter without a name at %q", s)
	}
	if s == "" || s[0] != '=' {
		return name, "", s, nil
	}
	s = strings.TrimLeft(s[1:], " \t")
	if s == "" || s[0] != '"' {
		i = strings.IndexAny(s, ";, \t")
		if i < 0 {
			i = len(s)
		}
		return name, s[:i], s[i:], nil
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i++; i < len(s) {
				b.WriteByte(s[i])
			}
		case '"':
			return name, b.String(), s[i+1:], nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", "", "", fmt.Errorf("link parameter %s: a quoted string without its closing quote", name)
}
