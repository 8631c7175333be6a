package oci

import (
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/hex"
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
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
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

// statement is the in-toto statement `cosign sign` (v3) signs for digest.
func statement(digest, predicateType string) []byte {
	return fmt.Appendf(nil, `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":%q}}],"predicateType":%q,"predicate":{}}`,
		strings.TrimPrefix(digest, "sha256:"), predicateType)
}

// keylessBundle signs body with a VirtualSigstore certificate for
// identity (its log entry integrated at logged) and returns the bundle
// JSON; withTSA keeps the timestamp authority's timestamp.
func keylessBundle(t *testing.T, vs *ca.VirtualSigstore, subject string, body []byte, logged time.Time, withTSA bool) []byte {
	t.Helper()
	e, err := vs.AttestAtTime(subject, testIssuer, body, logged, true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	entries, _ := e.TlogEntries()
	tss, _ := e.Timestamps()
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: vc.Certificate().Raw}},
	}
	for _, en := range entries {
		// tlog.NewEntry leaves out what a bundle carries beside the body:
		// the entry's kind and the log's promise (its SET), signed again
		// here with the virtual Rekor's key as GenerateTlogEntry did.
		tle := en.TransparencyLogEntry()
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		logID, _ := vs.RekorLogID()
		set, err := vs.RekorSignPayload(tlog.RekorPayload{LogID: logID, IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex,
			Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody)})
		if err != nil {
			t.Fatal(err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		vm.TlogEntries = append(vm.TlogEntries, tle)
	}
	if withTSA {
		vm.TimestampVerificationData = &protobundle.TimestampVerificationData{}
		for _, ts := range tss {
			vm.TimestampVerificationData.Rfc3161Timestamps = append(vm.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
		}
	}
	return marshalBundle(t, vm, sc.(*bundle.Envelope).Envelope)
}

// keyBundle signs body with priv (DSSE), as `cosign sign --key
// --tlog-upload=false` does in v3: a bundle with the key's hint and no
// certificate.
func keyBundle(t *testing.T, priv []byte, body []byte) []byte {
	t.Helper()
	s := signerOf(t, priv)
	pub, _ := s.PublicKey()
	es, err := dsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: s, Pub: pub.(*ecdsa.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	env, err := es.SignPayload(t.Context(), "application/vnd.in-toto+json", body)
	if err != nil {
		t.Fatal(err)
	}
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: "acme"}},
	}
	return marshalBundle(t, vm, env)
}

func marshalBundle(t *testing.T, vm *protobundle.VerificationMaterial, env *dsse.Envelope) []byte {
	t.Helper()
	payload, _ := base64.StdEncoding.DecodeString(env.Payload)
	pe := &protodsse.Envelope{Payload: payload, PayloadType: env.PayloadType}
	for _, s := range env.Signatures {
		sig, _ := base64.StdEncoding.DecodeString(s.Sig)
		pe.Signatures = append(pe.Signatures, &protodsse.Signature{Sig: sig, Keyid: s.KeyID})
	}
	if vm.TlogEntries == nil {
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{}
	}
	b, err := bundle.NewBundle(&protobundle.Bundle{MediaType: bundleV03, VerificationMaterial: vm, Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return j
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

// virtualRoot is vs's trusted root as a trusted_root.json reads back: the
// Fulcio CA, the timestamp authority and the Rekor log (no CT log: the
// virtual Fulcio's certificates carry no SCTs).
func virtualRoot(t *testing.T, vs *ca.VirtualSigstore) *TrustedRoot {
	t.Helper()
	// VirtualSigstore names its log by the hex string's bytes; a trusted
	// root file holds the key ID's raw bytes, which is what the bundle's
	// entries name.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		l.ID = raw
		logs[id] = l
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), nil, vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	j, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseTrustedRoot(j)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestVerifyBundles(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
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
			other, _ := ca.NewVirtualSigstore()
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
	vs, _ := ca.NewVirtualSigstore()
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
		},
	}
	for r, want := range map[string]string{
		"oci://ghcr.io/acme/echo:v1":       "ghcr.io/acme/echo",
		"oci://ghcr.io/acme/echo2:v1":      "ghcr.io/acme/*",
		"oci://ghcr.io/acme/tools/x/y:v1":  "ghcr.io/acme/tools/*",
		"oci://ghcr.io/acmex/echo:v1":      "ghcr.io/*",
		"oci://docker.io/acme/echo:v1":     "",
		"oci://localhost:5000/acme/echo:1": "",
	} {
		if got := tr.For(ref(t, r)).Rule; got != want {
			t.Errorf("%s: rule %q, want %q", r, got, want)
		}
	}
}

var _ = context.Background
var _ verify.SignedEntity = (*bundle.Bundle)(nil)
