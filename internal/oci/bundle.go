package oci

import (
	"context"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

// Sigstore bundles as cosign v3 attaches them (its specs/BUNDLE_SPEC.md):
// an OCI image manifest whose artifactType is the bundle's media type,
// whose config is the empty descriptor and whose one layer is the bundle
// JSON, with the signed manifest as its subject. It is found through the
// registry's referrers API, or, where the registry has none, through the
// referrers tag sha256-HEX (an index of the referring manifests).
const (
	// bundleMediaTypePrefix matches every bundle version's media type
	// (application/vnd.dev.sigstore.bundle.v0.3+json is cosign v3's).
	bundleMediaTypePrefix = "application/vnd.dev.sigstore.bundle"
	// cosignSignPredicate is the in-toto predicate type of the statement
	// `cosign sign` signs in a bundle; other predicates (SLSA provenance,
	// SBOMs: `cosign attest`) are attestations about the artifact, not
	// signatures of it.
	cosignSignPredicate = "https://sigstore.dev/cosign/sign/v1"
	// emptyMediaType is the config of an artifact manifest that has none.
	emptyMediaType = "application/vnd.oci.empty.v1+json"
	// maxBundles bounds the bundles one pull looks at.
	maxBundles = 16
)

// referrer is one entry of a referrers index.
type referrer struct {
	descriptor
	ArtifactType string `json:"artifactType,omitempty"`
}

type referrersIndex struct {
	Manifests []referrer `json:"manifests"`
}

// bundleManifest is the referring manifest of a bundle.
type bundleManifest struct {
	MediaType    string       `json:"mediaType"`
	ArtifactType string       `json:"artifactType"`
	Config       descriptor   `json:"config"`
	Layers       []descriptor `json:"layers"`
	Subject      *descriptor  `json:"subject"`
}

// bundleRefusal is why one bundle did not verify.
type bundleRefusal struct {
	kind error // ErrWrongSigner or ErrExpiredCert
	why  string
}

// verifyBundles looks for Sigstore bundles referring to pinned and
// returns the signer of the first that p trusts, else why each was
// refused (none: no bundle at all). The referrers are read a page at a
// time, and no further page once a bundle verifies or maxBundles were
// looked at.
func (c *Client) verifyBundles(ctx context.Context, pinned Reference, p Policy) (*Signer, []bundleRefusal, error) {
	s := pinned.String()
	rt, err := c.transport(ctx, pinned, transport.PullScope)
	if err != nil {
		return nil, nil, c.wrap(ctx, s, err)
	}
	f := fetcher{ctx: ctx, rt: rt, ref: pinned, s: s}
	digest := pinned.Digest()
	var signer *Signer
	var refusals []bundleRefusal
	seen := 0
	err = c.referrers(f, digest, func(refs []referrer) (bool, error) {
		for _, r := range refs {
			// The artifactType a registry lists is the manifest's, or its
			// config's media type when the registry reads that instead (the
			// empty descriptor's, for a bundle): the manifest decides.
			if r.ArtifactType != "" && r.ArtifactType != emptyMediaType && !strings.HasPrefix(r.ArtifactType, bundleMediaTypePrefix) || !validDigest(r.Digest) {
				continue
			}
			if seen++; seen > maxBundles {
				return true, nil
			}
			found, refusal, err := c.checkReferrer(f, r, digest, p)
			switch {
			case err != nil:
				return true, err
			case found != nil:
				signer = found
				return true, nil
			case refusal != nil:
				refusals = append(refusals, *refusal)
			}
		}
		return false, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if signer != nil {
		return signer, nil, nil
	}
	return nil, refusals, nil
}

// checkReferrer fetches one referrer and, when it is a bundle about
// digest, verifies it against p: its signer, or why it was refused, or
// neither for a referrer that is not such a bundle.
func (c *Client) checkReferrer(f fetcher, r referrer, digest string, p Policy) (*Signer, *bundleRefusal, error) {
	raw, _, _, err := f.manifest(r.Digest, r.Digest, c.opts.maxManifest())
	if err != nil {
		if err = c.wrap(f.ctx, f.s, err); errors.Is(err, ErrNotFound) {
			return nil, nil, nil // listed, since deleted
		}
		return nil, nil, err
	}
	var m bundleManifest
	if json.Unmarshal(raw, &m) != nil || !strings.HasPrefix(m.ArtifactType, bundleMediaTypePrefix) || len(m.Layers) != 1 ||
		!strings.HasPrefix(m.Layers[0].MediaType, bundleMediaTypePrefix) || !validDigest(m.Layers[0].Digest) {
		return nil, nil, nil // another kind of referrer
	}
	if m.Subject == nil || m.Subject.Digest != digest {
		return nil, nil, nil // listed under the wrong subject: not about this artifact
	}
	if m.Layers[0].Size > c.opts.maxManifest() {
		return nil, nil, fail(f.s, ErrTooLarge, "a bundle of %d bytes, over the cap of %d", m.Layers[0].Size, c.opts.maxManifest())
	}
	b, err := f.blob(m.Layers[0])
	if err != nil {
		return nil, nil, c.wrap(f.ctx, f.s, err)
	}
	signer, refusal := verifyBundle(b, digest, p)
	if signer != nil {
		return signer, nil, nil
	}
	return nil, &refusal, nil
}

// verifyBundle checks one bundle against p with sigstore-go: that it
// signs digest, with a key of p or, keyless, with a certificate from p's
// trusted root for one of p's identities at a time the bundle proves.
func verifyBundle(raw []byte, digest string, p Policy) (*Signer, bundleRefusal) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return nil, bundleRefusal{ErrWrongSigner, "a bundle that does not parse: " + err.Error()}
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, bundleRefusal{ErrWrongSigner, "a bundle without verification material: " + err.Error()}
	}
	sum, _ := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	artifact := verify.WithArtifactDigest("sha256", sum)
	if leaf := vc.Certificate(); leaf != nil {
		return verifyKeyless(&b, leaf, artifact, p)
	}
	if vc.PublicKey() == nil {
		return nil, bundleRefusal{ErrWrongSigner, "a bundle with neither a certificate nor a key"}
	}
	for _, k := range p.Keys {
		// A key bundle names its key by a hint only; try each trusted key.
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(k.v, time.Time{}, time.Time{}), nil
		})
		v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
		if err != nil {
			return nil, bundleRefusal{ErrWrongSigner, err.Error()}
		}
		res, err := v.Verify(&b, verify.NewPolicy(artifact, verify.WithKey()))
		if err != nil {
			continue
		}
		if why := notASignature(res); why != "" {
			return nil, bundleRefusal{ErrWrongSigner, why}
		}
		return &Signer{KeyID: k.ID, Form: FormBundle}, bundleRefusal{}
	}
	return nil, bundleRefusal{ErrWrongSigner, fmt.Sprintf("a bundle signed with a key (hint %q) that none of the %d trusted key(s) verifies, or over another digest", vc.PublicKey().Hint(), len(p.Keys))}
}

func verifyKeyless(b *bundle.Bundle, leaf *x509.Certificate, artifact verify.ArtifactPolicyOption, p Policy) (*Signer, bundleRefusal) {
	sum, err := certificate.SummarizeCertificate(leaf)
	if err != nil {
		return nil, bundleRefusal{ErrWrongSigner, "a bundle whose certificate is not a Fulcio certificate: " + err.Error()}
	}
	who := fmt.Sprintf("a keyless bundle by %s from %s", sum.SubjectAlternativeName, sum.Issuer)
	if p.Root == nil || len(p.Identities) == 0 {
		return nil, bundleRefusal{ErrWrongSigner, who + ", but no identity is trusted (trust.identities and trust.trusted_root)"}
	}
	tr := p.Root.tr
	opts := []verify.VerifierOption{verify.WithObserverTimestamps(1)}
	if len(tr.RekorLogs()) > 0 {
		opts = append(opts, verify.WithTransparencyLog(1))
	}
	if len(tr.CTLogs()) > 0 {
		opts = append(opts, verify.WithSignedCertificateTimestamps(1))
	}
	v, err := verify.NewVerifier(tr, opts...)
	if err != nil {
		return nil, bundleRefusal{ErrWrongSigner, err.Error()}
	}
	var popts []verify.PolicyOption
	for _, id := range p.Identities {
		ci, err := verify.NewShortCertificateIdentity(id.Issuer, "", id.Subject, id.SubjectRegexp)
		if err != nil {
			return nil, bundleRefusal{ErrWrongSigner, err.Error()}
		}
		popts = append(popts, verify.WithCertificateIdentity(ci))
	}
	res, err := v.Verify(b, verify.NewPolicy(artifact, popts...))
	if err != nil {
		var mismatch *verify.ErrNoMatchingCertificateIdentity
		switch {
		case errors.As(err, &mismatch):
			return nil, bundleRefusal{ErrWrongSigner, who + ", not a trusted identity"}
		case expired(b, leaf, err):
			return nil, bundleRefusal{ErrExpiredCert, fmt.Sprintf("%s: its certificate is valid from %s to %s, and the bundle proves no time within that (%v)",
				who, leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339), err)}
		}
		return nil, bundleRefusal{ErrWrongSigner, fmt.Sprintf("%s that does not verify against the trusted root: %v", who, err)}
	}
	if why := notASignature(res); why != "" {
		return nil, bundleRefusal{ErrWrongSigner, who + ": " + why}
	}
	return &Signer{Issuer: sum.Issuer, Subject: sum.SubjectAlternativeName, Form: FormBundle}, bundleRefusal{}
}

// expired reports whether a keyless verification failed on the
// certificate's validity: sigstore-go says so only in words, so the
// words are checked against the times the bundle gives (its log entries'
// integrated times, or now when it has none).
func expired(b *bundle.Bundle, leaf *x509.Certificate, err error) bool {
	msg := err.Error()
	if strings.Contains(msg, "outside certificate validity") {
		return true
	}
	if !strings.Contains(msg, "leaf certificate") && !strings.Contains(msg, "threshold not met") {
		return false
	}
	var times []time.Time
	if entries, err := b.TlogEntries(); err == nil {
		for _, e := range entries {
			if t := e.IntegratedTime(); !t.IsZero() {
				times = append(times, t)
			}
		}
	}
	if len(times) == 0 {
		times = []time.Time{time.Now()}
	}
	for _, t := range times {
		if t.Before(leaf.NotBefore) || t.After(leaf.NotAfter) {
			return true
		}
	}
	return false
}

// notASignature says why a verified bundle is not a signature of the
// artifact: a DSSE statement of another predicate type is an attestation
// (provenance, an SBOM) that `cosign attest` attached. A message
// signature has no statement.
func notASignature(res *verify.VerificationResult) string {
	if res.Statement != nil && res.Statement.PredicateType != cosignSignPredicate {
		return fmt.Sprintf("an attestation of predicate type %q, not a signature (%s)", res.Statement.PredicateType, cosignSignPredicate)
	}
	return ""
}
