// Package sigstoretest makes Sigstore bundles for tests: keyless ones from
// sigstore-go's VirtualSigstore (a Fulcio, a Rekor and a timestamp
// authority of its own, with a trusted root to match) and key ones, as
// cosign v3 writes them for an OCI artifact (a DSSE envelope of cosign
// sign's in-toto statement), and attaches them to an artifact in a
// registry as cosign v3 does (an OCI referrer).
package sigstoretest

import (
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
)

const (
	// BundleMediaType is cosign v3's bundle media type (and artifactType).
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// SignPredicate is the predicate type of the statement `cosign sign`
	// signs.
	SignPredicate = "https://sigstore.dev/cosign/sign/v1"
)

// Sigstore is a virtual Sigstore deployment. Its certificates are valid
// for 10 minutes from when they are made.
type Sigstore struct {
	vs *ca.VirtualSigstore
}

// New starts a virtual Sigstore.
func New(t testing.TB) *Sigstore {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	return &Sigstore{vs: vs}
}

// TrustedRoot is the deployment's trusted_root.json: its Fulcio CA, its
// timestamp authority and its Rekor log (no CT log: the virtual Fulcio's
// certificates carry no SCTs).
func (s *Sigstore) TrustedRoot(t testing.TB) []byte {
	t.Helper()
	// VirtualSigstore names its log by the hex string's bytes; a trusted
	// root file holds the key ID's raw bytes, which the entries name.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range s.vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			t.Fatal(err)
		}
		l.ID = raw
		logs[id] = l
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.vs.FulcioCertificateAuthorities(), nil, s.vs.TimestampingAuthorities(), logs)
	if err != nil {
		t.Fatal(err)
	}
	j, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// Statement is the in-toto statement `cosign sign` (v3) signs for
// digest (sha256:HEX), with predicateType.
func Statement(digest, predicateType string) []byte {
	return fmt.Appendf(nil, `{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"sha256":%q}}],"predicateType":%q,"predicate":{}}`,
		strings.TrimPrefix(digest, "sha256:"), predicateType)
}

// Keyless signs body with a fresh certificate for subject from issuer,
// logs it with integrated time logged, and returns the bundle JSON;
// withTSA keeps the timestamp authority's timestamp (made now).
func (s *Sigstore) Keyless(t testing.TB, issuer, subject string, body []byte, logged time.Time, withTSA bool) []byte {
	t.Helper()
	e, err := s.vs.AttestAtTime(subject, issuer, body, logged, true)
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
	logID, _ := s.vs.RekorLogID()
	for _, en := range entries {
		// tlog.NewEntry leaves out what a bundle carries beside the body:
		// the entry's kind and the log's promise (its SET), signed again
		// here with the virtual Rekor's key as GenerateTlogEntry did.
		tle := en.TransparencyLogEntry()
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{LogID: logID, IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex,
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
	return marshal(t, vm, sc.(*bundle.Envelope).Envelope)
}

// Key signs body with signer (an ECDSA key), as `cosign sign --key
// --tlog-upload=false` does in v3: a bundle with a key hint and no
// certificate, log entry or timestamp.
func Key(t testing.TB, signer signature.Signer, body []byte) []byte {
	t.Helper()
	pub, err := signer.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	es, err := dsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: signer, Pub: pub.(*ecdsa.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	env, err := es.SignPayload(t.Context(), "application/vnd.in-toto+json", body)
	if err != nil {
		t.Fatal(err)
	}
	vm := &protobundle.VerificationMaterial{
		Content: &protobundle.VerificationMaterial_PublicKey{PublicKey: &protocommon.PublicKeyIdentifier{Hint: "test-key"}},
	}
	return marshal(t, vm, env)
}

func marshal(t testing.TB, vm *protobundle.VerificationMaterial, env *dsse.Envelope) []byte {
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
	b, err := bundle.NewBundle(&protobundle.Bundle{MediaType: BundleMediaType, VerificationMaterial: vm, Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: pe}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := b.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return j
}

type rawManifest struct {
	b  []byte
	mt types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.b, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// Attach attaches bundle b to the manifest at pinned (REGISTRY/REPO@sha256:HEX,
// no scheme; a loopback registry over plain HTTP) as cosign v3's
// WriteAttestationNewBundleFormat does, through go-containerregistry's
// remote package: the bundle blob, the empty config, and a manifest with
// the bundle's artifactType and the artifact as its subject (remote
// updates the sha256-HEX referrers tag when the registry has no
// referrers API).
func Attach(t testing.TB, pinned string, b []byte) {
	t.Helper()
	d, err := name.NewDigest(pinned, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(d)
	if err != nil {
		t.Fatal(err)
	}
	layer := static.NewLayer(b, types.MediaType(BundleMediaType))
	empty := static.NewLayer([]byte("{}"), "application/vnd.oci.empty.v1+json")
	for _, l := range []v1.Layer{layer, empty} {
		if err := remote.WriteLayer(d.Context(), l); err != nil {
			t.Fatal(err)
		}
	}
	ld, _ := layer.Digest()
	ed, _ := empty.Digest()
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": string(types.OCIManifestSchema1), "artifactType": BundleMediaType,
		"config":      map[string]any{"mediaType": "application/vnd.oci.empty.v1+json", "artifactType": BundleMediaType, "digest": ed.String(), "size": 2},
		"layers":      []map[string]any{{"mediaType": BundleMediaType, "digest": ld.String(), "size": len(b)}},
		"subject":     map[string]any{"mediaType": string(desc.MediaType), "digest": desc.Digest.String(), "size": desc.Size},
		"annotations": map[string]string{"dev.sigstore.bundle.content": "dsse-envelope", "dev.sigstore.bundle.predicateType": SignPredicate},
	})
	h, _, _ := v1.SHA256(strings.NewReader(string(m)))
	if err := remote.Put(d.Context().Digest(h.String()), rawManifest{m, types.OCIManifestSchema1}); err != nil {
		t.Fatal(err)
	}
}
