package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/root"
)

// ErrExpiredCert: a keyless signature whose certificate was not valid at
// any time the bundle proves (its transparency log entry's or timestamp
// authority's), or, with no such time, is not valid now.
var ErrExpiredCert = errors.New("certificate expired")

// Identity is a keyless signer: the OIDC issuer of its Fulcio certificate
// and its subject (the certificate's SAN: an email, a workflow URI),
// exact or, with SubjectRegexp, a regular expression.
type Identity struct {
	Issuer        string
	Subject       string
	SubjectRegexp string
}

func (id Identity) String() string {
	if id.SubjectRegexp != "" {
		return fmt.Sprintf("subject matching %q from %s", id.SubjectRegexp, id.Issuer)
	}
	return fmt.Sprintf("%s from %s", id.Subject, id.Issuer)
}

// TrustedRoot is a Sigstore trusted root: the Fulcio certificate
// authorities, Rekor logs, CT logs and timestamp authorities whose keys
// keyless bundles are checked against (trusted_root.json).
type TrustedRoot struct {
	tr *root.TrustedRoot
}

// ParseTrustedRoot reads a trusted root as JSON (the
// application/vnd.dev.sigstore.trustedroot+json document that `cosign
// trusted-root create` writes and Sigstore's TUF repository serves).
func ParseTrustedRoot(b []byte) (*TrustedRoot, error) {
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, err
	}
	return &TrustedRoot{tr: tr}, nil
}

// LoadTrustedRoot reads a trusted root file.
func LoadTrustedRoot(path string) (*TrustedRoot, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := ParseTrustedRoot(b)
	if err != nil {
		return nil, fmt.Errorf("%s: not a Sigstore trusted root: %w", path, err)
	}
	return r, nil
}

// Policy is who may sign an artifact: public keys (either signature form)
// and keyless identities (Sigstore bundles, checked against Root).
type Policy struct {
	Keys       []PublicKey
	Identities []Identity
	Root       *TrustedRoot
	// Rule is the [trust.registries] pattern the policy is, or "" for
	// [trust] itself; refusals name it.
	Rule string
}

// Empty reports whether p trusts no signer at all.
func (p Policy) Empty() bool { return len(p.Keys) == 0 && len(p.Identities) == 0 }

func (p Policy) describe() string {
	var parts []string
	if len(p.Keys) > 0 {
		parts = append(parts, fmt.Sprintf("%d key(s)", len(p.Keys)))
	}
	for _, id := range p.Identities {
		parts = append(parts, id.String())
	}
	s := strings.Join(parts, ", ")
	if s == "" {
		s = "no signer"
	}
	if p.Rule != "" {
		s += ` ([trust.registries."` + p.Rule + `"])`
	}
	return s
}

// Signer is who a verified signature is by: a key (KeyID) or a keyless
// identity (Issuer and Subject from the certificate).
type Signer struct {
	KeyID           string
	Issuer, Subject string
	// Form is FormSigTag or FormBundle.
	Form string
}

// The signature forms a Signer was verified in.
const (
	// FormSigTag: a cosign simple-signing signature in the sha256-HEX.sig tag.
	FormSigTag = "sig-tag"
	// FormBundle: a Sigstore bundle attached as an OCI referrer.
	FormBundle = "bundle"
)

// Trust is a whole trust configuration: the default policy ([trust]) and
// the per-repository rules ([trust.registries."PATTERN"]).
type Trust struct {
	Default Policy
	// Rules are by pattern: REGISTRY/REPO for one repository, or
	// REGISTRY[/PREFIX]/* for every repository under the prefix.
	Rules map[string]Policy
}

// For returns the policy for ref's repository: the most specific rule
// that matches it (an exact repository before any prefix, a longer prefix
// before a shorter one), else the default.
//
// Docker Hub's repositories match as docker.io/… (go-containerregistry
// names the registry index.docker.io).
func (t Trust) For(ref Reference) Policy {
	repo := strings.TrimPrefix(ref.Repository(), Scheme)
	if r, ok := strings.CutPrefix(repo, "index.docker.io/"); ok {
		repo = "docker.io/" + r
	}
	if p, ok := t.Rules[repo]; ok {
		p.Rule = repo
		return p
	}
	var pats []string
	for pat := range t.Rules {
		if base, ok := strings.CutSuffix(pat, "/*"); ok && strings.HasPrefix(repo, base+"/") {
			pats = append(pats, pat)
		}
	}
	if len(pats) == 0 {
		return t.Default
	}
	sort.Slice(pats, func(i, j int) bool { return len(pats[i]) > len(pats[j]) })
	p := t.Rules[pats[0]]
	p.Rule = pats[0]
	return p
}

// VerifySigned checks that the manifest pinned names is signed by a
// signer p trusts, in either form: a Sigstore bundle among its referrers
// (cosign v3's default; keyless or by a key) or a key signature in its
// .sig tag (cosign's default up to v2). A refusal is an *Error of kind
// ErrNoSignature (neither form is there), ErrExpiredCert or
// ErrWrongSigner, with what was found.
func (c *Client) VerifySigned(ctx context.Context, pinned Reference, p Policy) (Signer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	s := pinned.String()
	if pinned.Digest() == "" {
		return Signer{}, fail(s, ErrReference, "verify needs a reference pinned by digest")
	}
	signer, bundles, err := c.verifyBundles(ctx, pinned, p)
	if err != nil {
		return Signer{}, err
	}
	if signer != nil {
		return *signer, nil
	}
	keyID, sigErr := c.Verify(ctx, pinned, p.Keys)
	if sigErr == nil {
		return Signer{KeyID: keyID, Form: FormSigTag}, nil
	}
	if !errors.Is(sigErr, ErrNoSignature) && !errors.Is(sigErr, ErrWrongSigner) {
		return Signer{}, sigErr
	}
	var detail string
	if e := (*Error)(nil); errors.As(sigErr, &e) {
		detail = e.Detail
	}
	if len(bundles) == 0 {
		if errors.Is(sigErr, ErrNoSignature) {
			return Signer{}, fail(s, ErrNoSignature, "no Sigstore bundle among its referrers and no %s tag signature", SignatureTag(pinned.Digest()))
		}
		return Signer{}, fail(s, ErrWrongSigner, "%s; trusted: %s", detail, p.describe())
	}
	kind := ErrWrongSigner
	var reasons []string
	for _, b := range bundles {
		if b.kind == ErrExpiredCert {
			kind = ErrExpiredCert
		}
		reasons = append(reasons, b.why)
	}
	if errors.Is(sigErr, ErrWrongSigner) {
		reasons = append(reasons, detail)
	}
	return Signer{}, fail(s, kind, "%d Sigstore bundle(s), none by a trusted signer: %s; trusted: %s", len(bundles), strings.Join(reasons, "; "), p.describe())
}
