package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/toolhost/toolhost/internal/testkit/sigstoretest"
)

const (
	testIssuer  = "https://token.actions.githubusercontent.com"
	testSubject = "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1"
	bundleV03   = "application/vnd.dev.sigstore.bundle.v0.3+json"
)

// serveReferrers is serve with the registry's OCI 1.1 referrers API on;
// without it (serve) bundles are found through the referrers tag, as on
// registries that predate the API (Debian's docker-registry 2.8).
func serveReferrers(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true)))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// attachBundle attaches a bundle to pinned as cosign v3 does
// (WriteAttestationNewBundleFormat): the bundle blob, the empty config, a
// manifest with the bundle's artifactType and pinned as its subject, and,
// for a registry without the referrers API, the sha256-HEX referrers tag.
func attachBundle(t *testing.T, c *Client, pinned Reference, b []byte, tagIndex bool) {
	t.Helper()
	ctx := t.Context()
	rt, err := c.transport(ctx, pinned, "push,pull")
	if err != nil {
		t.Fatal(err)
	}
	f := fetcher{ctx: ctx, rt: rt, ref: pinned, s: pinned.String()}
	empty := []byte("{}")
	for _, blob := range [][]byte{empty, b} {
		if err := f.putBlob(blob); err != nil {
			t.Fatal(err)
		}
	}
	raw, _, _, err := f.manifest(pinned.Digest(), pinned.Digest(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": ociManifest, "artifactType": bundleV03,
		"config":      map[string]any{"mediaType": "application/vnd.oci.empty.v1+json", "artifactType": bundleV03, "digest": sha256Digest(empty), "size": 2},
		"layers":      []descriptor{{MediaType: bundleV03, Digest: sha256Digest(b), Size: int64(len(b))}},
		"subject":     descriptor{MediaType: ociManifest, Digest: pinned.Digest(), Size: int64(len(raw))},
		"annotations": map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": cosignSignPredicate},
	})
	md := sha256Digest(m)
	if resp, err := f.do(http.MethodPut, f.url("manifests", md), ociManifest, m, http.StatusCreated, http.StatusOK); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if !tagIndex {
		return
	}
	tag := strings.Replace(pinned.Digest(), ":", "-", 1)
	var idx map[string]any
	if raw, _, _, err := f.manifest(tag, "", 1<<20); err == nil {
		json.Unmarshal(raw, &idx)
	} else {
		idx = map[string]any{"schemaVersion": 2, "mediaType": ociIndex, "manifests": []any{}}
	}
	idx["manifests"] = append(idx["manifests"].([]any), referrer{descriptor{ociManifest, md, int64(len(m))}, bundleV03})
	ib, _ := json.Marshal(idx)
	if resp, err := f.do(http.MethodPut, f.url("manifests", tag), ociIndex, ib, http.StatusCreated, http.StatusOK); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
}

// virtualRoot is vs's trusted root, read back as a trusted_root.json.
func virtualRoot(t *testing.T, vs *sigstoretest.Sigstore) *TrustedRoot {
	t.Helper()
	r, err := ParseTrustedRoot(vs.TrustedRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func statement(digest, predicate string) []byte { return sigstoretest.Statement(digest, predicate) }

func keylessBundle(t *testing.T, vs *sigstoretest.Sigstore, subject string, body []byte, logged time.Time, withTSA bool) []byte {
	return vs.Keyless(t, testIssuer, subject, body, logged, withTSA)
}

func keyBundle(t *testing.T, priv, body []byte) []byte {
	return sigstoretest.Key(t, signerOf(t, priv), body)
}

func TestVerifyBundles(t *testing.T) {
	vs := sigstoretest.New(t)
	tr := virtualRoot(t, vs)
	keyless := Policy{Root: tr, Identities: []Identity{{Issuer: testIssuer, Subject: testSubject}}}
	priv, pub := keyPair(t)
	_, otherPub := keyPair(t)
	now := time.Now()

	for _, api := range []bool{true, false} {
		t.Run(fmt.Sprintf("referrersAPI=%v", api), func(t *testing.T) {
			host := serve(t, nil)
			if api {
				host = serveReferrers(t)
			}
			c := New(Options{Keychain: anonymous})
			n := 0
			push := func() Reference {
				t.Helper()
				n++
				p, err := c.Push(t.Context(), ref(t, fmt.Sprintf("oci://%s/acme/echo:v%d", host, n)), module(fmt.Sprint(n)))
				if err != nil {
					t.Fatal(err)
				}
				return p
			}
			attach := func(p Reference, b []byte) { attachBundle(t, c, p, b, !api) }
			check := func(name string, p Reference, pol Policy, kind error, want Signer) {
				t.Helper()
				got, err := c.VerifySigned(t.Context(), p, pol)
				if kind == nil {
					if err != nil || got != want {
						t.Errorf("%s: %+v %v, want %+v", name, got, err, want)
					}
					return
				}
				if !errors.Is(err, kind) {
					t.Errorf("%s: %+v %v, want %v", name, got, err, kind)
				}
			}

			ok := push()
			attach(ok, keylessBundle(t, vs, testSubject, statement(ok.Digest(), cosignSignPredicate), now.Add(5*time.Minute), true))
			byIdentity := Signer{Issuer: testIssuer, Subject: testSubject, Form: FormBundle}
			check("keyless, identity matches", ok, keyless, nil, byIdentity)
			check("keyless, subject regexp matches", ok, Policy{Root: tr, Identities: []Identity{{Issuer: testIssuer, SubjectRegexp: `^https://github\.com/acme/`}}}, nil, byIdentity)
			check("keyless, other subject", ok, Policy{Root: tr, Identities: []Identity{{Issuer: testIssuer, Subject: "https://github.com/evil/echo/.github/workflows/release.yml@refs/tags/v1"}}}, ErrWrongSigner, Signer{})
			check("keyless, other issuer", ok, Policy{Root: tr, Identities: []Identity{{Issuer: "https://accounts.google.com", Subject: testSubject}}}, ErrWrongSigner, Signer{})
			other := sigstoretest.New(t)
			check("keyless, another Sigstore's root", ok, Policy{Root: virtualRoot(t, other), Identities: keyless.Identities}, ErrWrongSigner, Signer{})
			check("keyless bundle, only keys trusted", ok, Policy{Keys: []PublicKey{publicKey(t, pub)}}, ErrWrongSigner, Signer{})

			stale := push()
			// Logged 30 minutes on, when the 10-minute certificate has
			// expired, and no timestamp authority's time to save it.
			attach(stale, keylessBundle(t, vs, testSubject, statement(stale.Digest(), cosignSignPredicate), now.Add(30*time.Minute), false))
			check("expired certificate", stale, keyless, ErrExpiredCert, Signer{})

			keyed := push()
			attach(keyed, keyBundle(t, priv, statement(keyed.Digest(), cosignSignPredicate)))
			k := publicKey(t, pub)
			check("key bundle", keyed, Policy{Keys: []PublicKey{publicKey(t, otherPub), k}}, nil, Signer{KeyID: k.ID, Form: FormBundle})
			check("key bundle, wrong key", keyed, Policy{Keys: []PublicKey{publicKey(t, otherPub)}}, ErrWrongSigner, Signer{})
			check("key bundle, only identities trusted", keyed, keyless, ErrWrongSigner, Signer{})

			copied := push()
			// A valid bundle of another artifact, attached to this one.
			attach(copied, keylessBundle(t, vs, testSubject, statement(ok.Digest(), cosignSignPredicate), now.Add(5*time.Minute), true))
			check("bundle of another digest", copied, keyless, ErrWrongSigner, Signer{})

			attested := push()
			attach(attested, keylessBundle(t, vs, testSubject, statement(attested.Digest(), "https://slsa.dev/provenance/v1"), now.Add(5*time.Minute), true))
			check("an attestation, not a signature", attested, keyless, ErrWrongSigner, Signer{})

			bare := push()
			check("no bundle, no .sig", bare, keyless, ErrNoSignature, Signer{})
			// The .sig tag form still verifies through VerifySigned.
			if err := c.Sign(t.Context(), bare, signerOf(t, priv)); err != nil {
				t.Fatal(err)
			}
			check(".sig tag", bare, Policy{Keys: []PublicKey{k}}, nil, Signer{KeyID: k.ID, Form: FormSigTag})
			check(".sig tag, identities only", bare, keyless, ErrWrongSigner, Signer{})
		})
	}
}

// A bundle cannot vouch for a layer the registry changed: the pull
// refuses the bytes before any signature is looked at.
func TestTamperedLayerUnderValidBundle(t *testing.T) {
	vs := sigstoretest.New(t)
	mod := module("echo")
	layer := sha256Digest(mod)
	host := serve(t, tamper(layer, flipLast))
	c := New(Options{Keychain: anonymous})
	p, err := c.Push(t.Context(), ref(t, "oci://"+host+"/acme/echo:v1"), mod)
	if err != nil {
		t.Fatal(err)
	}
	attachBundle(t, c, p, keylessBundle(t, vs, testSubject, statement(p.Digest(), cosignSignPredicate), time.Now().Add(5*time.Minute), true), true)
	if _, err := c.VerifySigned(t.Context(), p, Policy{Root: virtualRoot(t, vs), Identities: []Identity{{Issuer: testIssuer, Subject: testSubject}}}); err != nil {
		t.Fatalf("the manifest's bundle: %v", err)
	}
	if _, err := c.Pull(t.Context(), p); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("tampered layer: %v, want ErrDigestMismatch", err)
	}
}

func TestTrustFor(t *testing.T) {
	tr := Trust{
		Default: Policy{Identities: []Identity{{Issuer: "d", Subject: "d"}}},
		Rules: map[string]Policy{
			"ghcr.io/*":            {Identities: []Identity{{Issuer: "g", Subject: "g"}}},
			"ghcr.io/acme/*":       {Identities: []Identity{{Issuer: "a", Subject: "a"}}},
			"ghcr.io/acme/echo":    {Identities: []Identity{{Issuer: "e", Subject: "e"}}},
			"ghcr.io/acme/tools/*": {Identities: []Identity{{Issuer: "t", Subject: "t"}}},
			"docker.io/acme/*":     {Identities: []Identity{{Issuer: "h", Subject: "h"}}},
		},
	}
	for r, want := range map[string]string{
		"oci://ghcr.io/acme/echo:v1":       "ghcr.io/acme/echo",
		"oci://ghcr.io/acme/echo2:v1":      "ghcr.io/acme/*",
		"oci://ghcr.io/acme/tools/x/y:v1":  "ghcr.io/acme/tools/*",
		"oci://ghcr.io/acmex/echo:v1":      "ghcr.io/*",
		"oci://docker.io/acme/echo:v1":     "docker.io/acme/*",
		"oci://docker.io/other/echo:v1":    "",
		"oci://localhost:5000/acme/echo:1": "",
	} {
		if got := tr.For(ref(t, r)).Rule; got != want {
			t.Errorf("%s: rule %q, want %q", r, got, want)
		}
	}
}
