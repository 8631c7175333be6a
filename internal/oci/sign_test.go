package oci

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/secure-systems-lab/go-securesystemslib/encrypted"
	"github.com/sigstore/sigstore/pkg/signature"
)

// keyPair makes an ECDSA P-256 key pair, cosign's default, as PEM.
func keyPair(t *testing.T) (priv, pub []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
}

func signerOf(t *testing.T, priv []byte) signature.Signer {
	t.Helper()
	s, err := ParsePrivateKey(priv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func publicKey(t *testing.T, pub []byte) PublicKey {
	t.Helper()
	k, err := ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSignAndVerifyKeySignatures(t *testing.T) {
	host := serve(t, nil)
	c := New(Options{Keychain: anonymous})
	a, err := c.Push(t.Context(), ref(t, "oci://"+host+"/tools/echo:v1"), module("a"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Push(t.Context(), ref(t, "oci://"+host+"/tools/echo:v2"), module("b"))
	if err != nil {
		t.Fatal(err)
	}
	priv1, pub1 := keyPair(t)
	priv2, pub2 := keyPair(t)
	_, pub3 := keyPair(t)
	k1, k2, k3 := publicKey(t, pub1), publicKey(t, pub2), publicKey(t, pub3)

	if _, err := c.Verify(t.Context(), a, []PublicKey{k1}); !errors.Is(err, ErrNoSignature) {
		t.Fatalf("unsigned: %v, want ErrNoSignature", err)
	}
	if err := c.Sign(t.Context(), a, signerOf(t, priv1)); err != nil {
		t.Fatal(err)
	}
	if id, err := c.Verify(t.Context(), a, []PublicKey{k3, k1}); err != nil || id != k1.ID {
		t.Fatalf("verify: %q %v, want %s", id, err, k1.ID)
	}
	if _, err := c.Verify(t.Context(), a, []PublicKey{k2}); !errors.Is(err, ErrWrongSigner) {
		t.Fatalf("other key: %v, want ErrWrongSigner", err)
	}
	// A second signer is added beside the first, as cosign does.
	if err := c.Sign(t.Context(), a, signerOf(t, priv2)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []PublicKey{k1, k2} {
		if id, err := c.Verify(t.Context(), a, []PublicKey{k}); err != nil || id != k.ID {
			t.Fatalf("after a second signature, key %s: %q %v", k.ID, id, err)
		}
	}

	// a's signatures copied under b's tag sign a's digest, not b's.
	src, err := name.ParseReference(host + "/tools/echo:" + SignatureTag(a.Digest()))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(src)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := name.ParseReference(host + "/tools/echo:" + SignatureTag(b.Digest()))
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Put(dst, desc); err != nil {
		t.Fatal(err)
	}
	_, err = c.Verify(t.Context(), b, []PublicKey{k1})
	if !errors.Is(err, ErrWrongSigner) {
		t.Fatalf("replayed signature: %v, want ErrWrongSigner", err)
	}
	t.Log(err)
}

func TestParseEncryptedCosignKey(t *testing.T) {
	priv, pub := keyPair(t)
	block, _ := pem.Decode(priv)
	enc, err := encrypted.Encrypt(block.Bytes, []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	encPEM := pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: enc})
	if _, err := ParsePrivateKey(encPEM, []byte("wrong")); err == nil {
		t.Fatal("decrypted with the wrong password")
	}
	s, err := ParsePrivateKey(encPEM, []byte("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.PublicKey()
	if err != nil {
		t.Fatal(err)
	}
	want := publicKey(t, pub)
	der, _ := x509.MarshalPKIXPublicKey(got)
	if k := publicKey(t, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})); k.ID != want.ID {
		t.Fatalf("key %s, want %s", k.ID, want.ID)
	}
}
