package oci

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Cosign's key-based signatures in the .sig tag scheme: the signatures of
// manifest sha256:HEX are the layers of the manifest tagged
// sha256-HEX.sig in the same repository, each a simple-signing payload
// that names the digest, with its signature in an annotation.
const (
	simpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	signatureAnnotation    = "dev.cosignproject.cosign/signature"
	simpleSigningType      = "cosign container image signature"
	ociConfigMediaType     = "application/vnd.oci.image.config.v1+json"
)

// Kinds of signature failure, beside those in oci.go.
var (
	// ErrNoSignature: the artifact has no signature at all.
	ErrNoSignature = errors.New("no signature")
	// ErrWrongSigner: signatures exist, none by a trusted signer (a key, or
	// a keyless identity for a bundle).
	ErrWrongSigner = errors.New("no signature by a trusted signer")
)

// PublicKey is a trusted public key.
type PublicKey struct {
	// ID names the key: sha256:HEX of its DER encoding (what a lock file
	// records as the signer).
	ID string
	v  signature.Verifier
}

// ParsePublicKey reads a PEM public key (cosign.pub, as `cosign
// generate-key-pair` writes it).
func ParsePublicKey(pemBytes []byte) (PublicKey, error) {
	pk, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return PublicKey{}, err
	}
	der, err := x509.MarshalPKIXPublicKey(pk)
	if err != nil {
		return PublicKey{}, err
	}
	v, err := signature.LoadVerifier(pk, crypto.SHA256)
	if err != nil {
		return PublicKey{}, err
	}
	sum := sha256.Sum256(der)
	return PublicKey{ID: "sha256:" + hex.EncodeToString(sum[:]), v: v}, nil
}

// LoadPublicKey reads a PEM public key file.
func LoadPublicKey(path string) (PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return PublicKey{}, err
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return PublicKey{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// ParsePrivateKey reads a PEM private key: cosign's encrypted format
// (ENCRYPTED SIGSTORE PRIVATE KEY or ENCRYPTED COSIGN PRIVATE KEY, scrypt
// and secretbox, decrypted with password) or a plain PKCS #8, EC or RSA
// key.
func ParsePrivateKey(pemBytes, password []byte) (signature.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	var pk crypto.PrivateKey
	var err error
	switch block.Type {
	case "ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY":
		der, derr := encrypted.Decrypt(block.Bytes, password)
		if derr != nil {
			return nil, fmt.Errorf("decrypting the key (COSIGN_PASSWORD): %w", derr)
		}
		pk, err = x509.ParsePKCS8PrivateKey(der)
	default:
		pk, err = cryptoutils.UnmarshalPEMToPrivateKey(pemBytes, cryptoutils.SkipPassword)
	}
	if err != nil {
		return nil, err
	}
	return signature.LoadSigner(pk, crypto.SHA256)
}

// SignatureTag is the tag of digest's signatures: sha256-HEX.sig.
func SignatureTag(digest string) string {
	return strings.Replace(digest, ":", "-", 1) + ".sig"
}

type simpleSigning struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

type sigLayer struct {
	descriptor
	Annotations map[string]string `json:"annotations,omitempty"`
}

type sigManifest struct {
	SchemaVersion int        `json:"schemaVersion"`
	MediaType     string     `json:"mediaType"`
	Config        descriptor `json:"config"`
	Layers        []sigLayer `json:"layers"`
}

// Sign signs the manifest pinned names and adds the signature to its .sig
// tag, keeping the signatures already there (as cosign sign --key does).
func (c *Client) Sign(ctx context.Context, pinned Reference, signer signature.Signer) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	s := pinned.String()
	digest := pinned.Digest()
	if digest == "" {
		return fail(s, ErrReference, "sign needs a reference pinned by digest")
	}
	var p simpleSigning
	p.Critical.Identity.DockerReference = pinned.ref.Context().Name()
	p.Critical.Image.DockerManifestDigest = digest
	p.Critical.Type = simpleSigningType
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	sig, err := signer.SignMessage(bytes.NewReader(payload))
	if err != nil {
		return &Error{Ref: s, Detail: "signing", Err: err}
	}
	sigRef, err := ParseReference(pinned.Repository()+":"+SignatureTag(digest), c.opts.Insecure)
	if err != nil {
		return err
	}
	rt, err := c.transport(ctx, sigRef, transport.PushScope)
	if err != nil {
		return c.wrap(ctx, s, err)
	}
	f := fetcher{ctx: ctx, rt: rt, ref: sigRef, s: s}
	var layers []sigLayer
	if raw, _, _, err := f.manifest(f.ref.ref.Identifier(), f.ref.Digest(), c.opts.maxManifest()); err == nil {
		var old sigManifest
		if json.Unmarshal(raw, &old) == nil {
			layers = old.Layers
		}
	} else if !errors.Is(c.wrap(ctx, s, err), ErrNotFound) {
		return c.wrap(ctx, s, err)
	}
	layers = append(layers, sigLayer{
		descriptor:  descriptor{MediaType: simpleSigningMediaType, Digest: sha256Digest(payload), Size: int64(len(payload))},
		Annotations: map[string]string{signatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	diffIDs := make([]string, len(layers))
	for i, l := range layers {
		diffIDs[i] = l.Digest
	}
	config, err := json.Marshal(map[string]any{"architecture": "", "os": "", "config": map[string]any{}, "rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs}})
	if err != nil {
		return err
	}
	m, err := json.Marshal(sigManifest{
		SchemaVersion: 2, MediaType: ociManifest,
		Config: descriptor{MediaType: ociConfigMediaType, Digest: sha256Digest(config), Size: int64(len(config))},
		Layers: layers,
	})
	if err != nil {
		return err
	}
	for _, b := range [][]byte{config, payload} {
		if err := f.putBlob(b); err != nil {
			return c.wrap(ctx, s, err)
		}
	}
	resp, err := f.do(http.MethodPut, f.url("manifests", SignatureTag(digest)), ociManifest, m, http.StatusCreated, http.StatusOK)
	if err != nil {
		return c.wrap(ctx, s, err)
	}
	resp.Body.Close()
	return nil
}

// Verify checks that the manifest pinned names has a signature, in its
// .sig tag, by one of keys over a payload that names that digest, and
// returns the ID of the key that signed.
func (c *Client) Verify(ctx context.Context, pinned Reference, keys []PublicKey) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.timeout())
	defer cancel()
	s := pinned.String()
	digest := pinned.Digest()
	if digest == "" {
		return "", fail(s, ErrReference, "verify needs a reference pinned by digest")
	}
	sigRef, err := ParseReference(pinned.Repository()+":"+SignatureTag(digest), c.opts.Insecure)
	if err != nil {
		return "", err
	}
	rt, err := c.transport(ctx, sigRef, transport.PullScope)
	if err != nil {
		return "", c.wrap(ctx, s, err)
	}
	f := fetcher{ctx: ctx, rt: rt, ref: sigRef, s: s}
	raw, _, _, err := f.manifest(f.ref.ref.Identifier(), f.ref.Digest(), c.opts.maxManifest())
	if err != nil {
		if err = c.wrap(ctx, s, err); errors.Is(err, ErrNotFound) {
			return "", fail(s, ErrNoSignature, "no %s tag", SignatureTag(digest))
		}
		return "", err
	}
	var m sigManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", &Error{Ref: s, Kind: ErrNoSignature, Detail: "the signature manifest is not JSON", Err: err}
	}
	seen := 0
	var reasons []string
	for _, l := range m.Layers {
		enc, ok := l.Annotations[signatureAnnotation]
		if l.MediaType != simpleSigningMediaType || !ok || !validDigest(l.Digest) || l.Size > c.opts.maxManifest() {
			continue
		}
		seen++
		sig, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			reasons = append(reasons, "a signature that is not base64")
			continue
		}
		payload, err := f.blob(l.descriptor)
		if err != nil {
			return "", c.wrap(ctx, s, err)
		}
		for _, k := range keys {
			if k.v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(payload)) != nil {
				continue
			}
			var p simpleSigning
			if err := json.Unmarshal(payload, &p); err != nil || p.Critical.Type != simpleSigningType {
				reasons = append(reasons, "a signed payload that is not a cosign simple-signing document")
				continue
			}
			if p.Critical.Image.DockerManifestDigest != digest {
				reasons = append(reasons, "a signature by "+k.ID+" of another digest, "+p.Critical.Image.DockerManifestDigest)
				continue
			}
			return k.ID, nil
		}
	}
	if seen == 0 {
		return "", fail(s, ErrNoSignature, "%s holds no cosign signature", SignatureTag(digest))
	}
	detail := fmt.Sprintf("%d signature(s), none verifies with the %d trusted key(s)", seen, len(keys))
	if len(reasons) > 0 {
		detail += " (" + strings.Join(reasons, "; ") + ")"
	}
	return "", fail(s, ErrWrongSigner, "%s", detail)
}
