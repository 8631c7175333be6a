package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/toolhost/toolhost/internal/netguard"
)

// fetcher makes the Verifier's requests. Its client dials only public
// addresses or those in allow (checked on the address actually dialled,
// so DNS names and redirects cannot sidestep it), ignores proxy settings
// (a proxy would be dialled in place of the real address), and bounds
// every request's time and answer size.
type fetcher struct {
	client  *http.Client
	allow   []netip.Prefix
	timeout time.Duration
}

func newFetcher(allow []netip.Prefix, timeout time.Duration) *fetcher {
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	f := &fetcher{allow: allow, timeout: timeout}
	dialer := &net.Dialer{Timeout: timeout, Control: netguard.Control(allow)}
	f.client = &http.Client{
		Transport: &http.Transport{
			DialContext:            dialer.DialContext,
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConns:           4,
			IdleConnTimeout:        time.Minute,
			ForceAttemptHTTP2:      true,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("more than 3 redirects")
			}
			return f.checkURL(req.URL.String())
		},
	}
	return f
}

// checkURL accepts https, and plain http only to a loopback address the
// operator allowed (a test issuer): tokens and keys must not travel, or be
// altered, in the clear.
func (f *fetcher) checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if host == "localhost" {
			host = "127.0.0.1"
		}
		if a, err := netip.ParseAddr(host); err == nil && a.Unmap().IsLoopback() && netguard.Allowed(a, f.allow) {
			return nil
		}
		return fmt.Errorf("%q: use https (plain http is accepted only for a loopback address listed in allow_networks)", s)
	}
	return fmt.Errorf("%q: the scheme must be https", s)
}

// getJSON GETs url and decodes its JSON answer, at most limit bytes, into
// dst.
func (f *fetcher) getJSON(ctx context.Context, url string, limit int, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	return f.do(req, limit, dst)
}

// postForm POSTs form to target with HTTP Basic credentials and decodes the
// JSON answer into dst.
func (f *fetcher) postForm(ctx context.Context, target string, form url.Values, user, pass string, dst any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the credentials are form-encoded before Basic.
	req.SetBasicAuth(url.QueryEscape(user), url.QueryEscape(pass))
	return f.do(req, MaxFetchBytes, dst)
}

// do runs req within the fetch timeout (and req's own deadline); an
// answer that is not 200, larger than limit or not JSON is an error naming
// the URL (never its credentials or body).
func (f *fetcher) do(req *http.Request, limit int, dst any) error {
	if err := f.checkURL(req.URL.String()); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(req.Context(), f.timeout)
	defer cancel()
	resp, err := f.client.Do(req.WithContext(ctx))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL
		}
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return &statusError{method: req.Method, url: req.URL.Redacted(), status: resp.StatusCode}
	}
	if resp.ContentLength > int64(limit) {
		return fmt.Errorf("%s %s: the answer is larger than %d bytes", req.Method, req.URL.Redacted(), limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", req.Method, req.URL.Redacted(), err)
	}
	if len(body) > limit {
		return fmt.Errorf("%s %s: the answer is larger than %d bytes", req.Method, req.URL.Redacted(), limit)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", req.Method, req.URL.Redacted(), err)
	}
	return nil
}

// statusError is an answer other than 200.
type statusError struct {
	method, url string
	status      int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d", e.method, e.url, e.status)
}
