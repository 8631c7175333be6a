package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/registry"
)

// pager splits a registry's referrers answer into pages of size entries
// (ordered: bundles last, unless bundlesFirst; the registry lists in map
// order), serving page N of ?page=N, with the Link header link gives;
// every other request passes through unchanged.
type pager struct {
	next         http.Handler
	size         int
	bundlesFirst bool
	// link is the Link header value of page n (1-based) of pages, for the
	// referrers request r ("" for none).
	link  func(r *http.Request, n, pages int) string
	pages atomic.Int32 // referrers pages served
}

func (p *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/referrers/") {
		p.next.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	p.next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	var idx struct {
		SchemaVersion int        `json:"schemaVersion"`
		MediaType     string     `json:"mediaType"`
		Manifests     []referrer `json:"manifests"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	isBundle := func(r referrer) bool { return r.ArtifactType == emptyMediaType }
	slices.SortFunc(idx.Manifests, func(a, b referrer) int {
		if isBundle(a) != isBundle(b) {
			if isBundle(a) == p.bundlesFirst {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Digest, b.Digest)
	})
	n := 1
	if q := r.URL.Query().Get("page"); q != "" {
		n, _ = strconv.Atoi(q)
	}
	pages := (len(idx.Manifests) + p.size - 1) / p.size
	lo, hi := min((n-1)*p.size, len(idx.Manifests)), min(n*p.size, len(idx.Manifests))
	idx.Manifests = idx.Manifests[lo:hi]
	p.pages.Add(1)
	if l := p.link(r, n, pages); l != "" {
		w.Header().Set("Link", l)
	}
	w.Header().Set("Content-Type", ociIndex)
	json.NewEncoder(w).Encode(idx)
}

// attachOther attaches a referrer to pinned that is not a bundle (an SBOM,
// say), listed under its config's media type as the registry does.
func attachOther(t *testing.T, c *Client, pinned Reference, i int) {
	t.Helper()
	rt, err := c.transport(t.Context(), pinned, "push,pull")
	if err != nil {
		t.Fatal(err)
	}
	f := fetcher{ctx: t.Context(), rt: rt, ref: pinned, s: pinned.String()}
	raw, _, _, err := f.manifest(pinned.Digest(), pinned.Digest(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociManifest, "artifactType": "application/spdx+json",
		"config":      descriptor{MediaType: "application/spdx+json", Digest: sha256Digest([]byte("{}")), Size: 2},
		"layers":      []descriptor{},
		"subject":     descriptor{MediaType: ociManifest, Digest: pinned.Digest(), Size: int64(len(raw))},
		"annotations": map[string]string{"n": fmt.Sprint(i)},
	})
	resp, err := f.do(http.MethodPut, f.url("manifests", sha256Digest(m)), ociManifest, m, http.StatusCreated, http.StatusOK)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestReferrersPages reads a referrers list the registry splits into
// pages with Link rel="next": three other referrers and a key bundle, two
// to a page, so the bundle is on page 2. Every request needs alice's
// credential, pages after the first included.
func TestReferrersPages(t *testing.T) {
	priv, pub := keyPair(t)
	k := publicKey(t, pub)
	pol := Policy{Keys: []PublicKey{k}}
	at := func(r *http.Request, n int) string { // the path of page n of r's list
		return fmt.Sprintf("%s?page=%d", r.URL.Path, n)
	}
	for _, tc := range []struct {
		name         string
		bundlesFirst bool
		// link gives page n's Link header, of pages; host is the
		// registry's, other another server's.
		link     func(r *http.Request, host, other string, n, pages int) string
		noBundle bool  // attach none, only the other referrers
		kind     error // nil: the bundle verifies
		pages    int32 // pages the registry served
	}{
		{name: "absolute link, bundle on page 2", pages: 2, link: func(r *http.Request, host, _ string, n, pages int) string {
			if n == pages {
				return ""
			}
			return fmt.Sprintf(`<http://%s%s>; rel="next"`, host, at(r, n+1))
		}},
		{name: "relative link beside others, bundle on page 2", pages: 2, link: func(r *http.Request, _, _ string, n, pages int) string {
			if n == pages {
				return fmt.Sprintf(`<%s>; rel=prev`, at(r, n-1))
			}
			// Resolved against .../referrers/sha256:HEX: the same path
			// ("./", since a first segment with a colon reads as a scheme).
			last := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
			return fmt.Sprintf(`<?page=1>; rel="first", <./%s?page=%d>; title="a, b;c"; rel="Next last"; rel=prev`, last, n+1)
		}},
		{name: "bundle on page 1: page 2 is not read", bundlesFirst: true, pages: 1, link: func(r *http.Request, _, _ string, n, _ int) string {
			return fmt.Sprintf(`<%s>; rel="next"`, at(r, n+1))
		}},
		{name: "only rel=prev: the list ends at page 1", kind: ErrNoSignature, pages: 1, link: func(r *http.Request, _, _ string, n, _ int) string {
			return fmt.Sprintf(`<%s>; rel="prev"`, at(r, n+1))
		}},
		{name: "link to another host", kind: ErrNoSignature, pages: 1, link: func(r *http.Request, _, other string, n, _ int) string {
			return fmt.Sprintf(`<http://%s%s>; rel="next"`, other, at(r, n+1))
		}},
		{name: "link to another scheme", kind: ErrNoSignature, pages: 1, link: func(r *http.Request, host, _ string, n, _ int) string {
			return fmt.Sprintf(`<https://%s%s>; rel="next"`, host, at(r, n+1))
		}},
		{name: "link with a user", kind: ErrNoSignature, pages: 1, link: func(r *http.Request, host, _ string, n, _ int) string {
			return fmt.Sprintf(`<http://mallory@%s%s>; rel="next"`, host, at(r, n+1))
		}},
		{name: "link that does not parse", kind: ErrNoSignature, pages: 1, link: func(r *http.Request, _, _ string, n, _ int) string {
			return at(r, n+1) + `; rel="next"`
		}},
		{name: "link loop", kind: ErrNoSignature, pages: 2, link: func(r *http.Request, _, _ string, _, _ int) string {
			return fmt.Sprintf(`<%s>; rel="next"`, at(r, 1))
		}},
		{name: "endless pages", noBundle: true, kind: ErrTooLarge, pages: maxReferrerPages, link: func(r *http.Request, _, _ string, n, _ int) string {
			return fmt.Sprintf(`<%s>; rel="next"`, at(r, n+1))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var strays atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				strays.Add(1)
				http.NotFound(w, r)
			}))
			t.Cleanup(other.Close)
			var host string
			p := &pager{
				next:         registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)),
				size:         2,
				bundlesFirst: tc.bundlesFirst,
				link: func(r *http.Request, n, pages int) string {
					return tc.link(r, host, strings.TrimPrefix(other.URL, "http://"), n, pages)
				},
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if u, pw, ok := r.BasicAuth(); !ok || u != "alice" || pw != "s3cret" {
					w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				p.ServeHTTP(w, r)
			}))
			t.Cleanup(srv.Close)
			host = strings.TrimPrefix(srv.URL, "http://")

			c := New(Options{Keychain: staticKeychain{authn.AuthConfig{Username: "alice", Password: "s3cret"}}})
			pinned, err := c.Push(t.Context(), ref(t, "oci://"+host+"/acme/echo:v1"), module("paged"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				attachOther(t, c, pinned, i)
			}
			if !tc.noBundle {
				attachBundle(t, c, pinned, keyBundle(t, priv, statement(pinned.Digest(), cosignSignPredicate)), false)
			}

			p.pages.Store(0)
			got, err := c.VerifySigned(t.Context(), pinned, pol)
			if tc.kind == nil {
				if want := (Signer{KeyID: k.ID, Form: FormBundle}); err != nil || got != want {
					t.Errorf("%+v %v, want %+v", got, err, want)
				}
			} else if !errors.Is(err, tc.kind) {
				t.Errorf("%+v %v, want %v", got, err, tc.kind)
			} else {
				t.Logf("refused as wanted: %v", err)
			}
			if n := p.pages.Load(); n != tc.pages {
				t.Errorf("the registry served %d referrers pages, want %d", n, tc.pages)
			}
			if n := strays.Load(); n != 0 {
				t.Errorf("%d requests reached another host", n)
			}
		})
	}
}

func TestNextLink(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
		bad  bool
	}{
		{in: nil},
		{in: []string{""}},
		{in: []string{`</v2/r/referrers/d?n=2>; rel="next"`}, want: "/v2/r/referrers/d?n=2"},
		{in: []string{`<a>;rel=next`}, want: "a"},
		{in: []string{`<a>; REL="NEXT"`}, want: "a"},
		{in: []string{`<a>; rel="prev"`}},
		{in: []string{`<a>; rel="prev", <b>; rel="next"`}, want: "b"},
		{in: []string{`<a>; rel="prev"`, `<b>; rel="next"`}, want: "b"},
		{in: []string{`<a,b>; rel="next"`}, want: "a,b"},
		{in: []string{`<a>; title="x, rel=next"; rel=prev, <b>; rel="last next"`}, want: "b"},
		{in: []string{`<a>; rel="prev"; rel="next"`}}, // only the first rel counts
		{in: []string{`<a>; title*=UTF-8'de'n%c3%a4chstes; rel=next`}, want: "a"},
		{in: []string{`<a>; anchor; rel=next`}, want: "a"},
		{in: []string{`<a>; title="q\"uote"; rel=next`}, want: "a"},
		{in: []string{`a; rel="next"`}, bad: true},
		{in: []string{`<a; rel="next"`}, bad: true},
		{in: []string{`<a> rel="next"`}, bad: true},
		{in: []string{`<a>; rel="next`}, bad: true},
		{in: []string{`<a>; ="next"`}, bad: true},
	} {
		got, err := nextLink(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("nextLink(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
