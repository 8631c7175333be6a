// Command hashtools is a toolhost tool module for digests, base64 and random
// identifiers: byte-exact work a language model gets wrong when it guesses.
// Build it as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/hashtools.wasm ./tools-src/hashtools
package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

func init() {
	// Pure functions that answer in milliseconds; 5 s only stops a
	// pathological input early.
	// Pure functions keep nothing between calls: a caller's calls may
	// share a warm instance (docs/ABI.md, "Warm instances").
	pure := guest.Options{Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse}

	pure.Title = "SHA-256 digest"
	pure.Description = "Computes the SHA-256 digest of a text (its UTF-8 bytes) or of binary data given " +
		"as standard base64, and returns it as lowercase hex and as standard base64. Pass exactly one of " +
		"text and data_base64."
	guest.Register("hash.sha256", pure, sha256Digest)

	pure.Title = "HMAC-SHA256 signature"
	pure.Description = "Computes the HMAC-SHA256 of a message under a secret key, as lowercase hex and " +
		"standard base64: the signature scheme of most webhook and API request signing. The key is " +
		"key (UTF-8 text) or key_base64 (binary); the message is text (UTF-8) or data_base64 (binary). " +
		"Pass exactly one of each pair."
	guest.Register("hash.hmac_sha256", pure, hmacDigest)

	pure.Title = "Base64-encode text"
	pure.Description = "Encodes the UTF-8 bytes of a text as base64. variant picks the alphabet and " +
		"padding: std (RFC 4648 + and / with = padding, the default), url (- and _ with padding), " +
		"raw_std and raw_url (no padding, as in JWTs)."
	guest.Register("encode.base64", pure, encodeBase64)

	pure.Title = "Decode base64"
	pure.Description = "Decodes base64. With the default variant auto, the alphabet (std or url) and " +
		"padding are detected and line breaks and spaces are ignored; name a variant to decode strictly. " +
		"Returns text when the bytes are valid UTF-8 and hex otherwise, plus the byte count."
	guest.Register("decode.base64", pure, decodeBase64)

	guest.Register("uuid.v4", guest.Options{
		Title: "Generate random UUIDs",
		Description: "Generates random (version 4, RFC 9562) UUIDs in lowercase canonical form, one by " +
			"default or up to 100. Every call returns new UUIDs, so the call is not idempotent.",
		ReadOnly:  true, // it changes nothing, but a repeated call must not return the same UUIDs
		TimeoutMS: 5000,
		Instances: abi.InstancesReuse, // crypto/rand reads the host's randomness on every call
	}, uuidV4)
}

func main() {}

type digest struct {
	Hex    string `json:"hex" jsonschema:"description=lowercase hexadecimal"`
	Base64 string `json:"base64" jsonschema:"description=standard base64 with padding"`
}

func newDigest(sum []byte) digest {
	return digest{Hex: hex.EncodeToString(sum), Base64: base64.StdEncoding.EncodeToString(sum)}
}

// Pointers tell a missing field from an empty one: "" is a valid message
// and a valid key.
type sha256Args struct {
	Text       *string `json:"text,omitempty" jsonschema:"oneof_required=text,description=text to hash as UTF-8"`
	DataBase64 *string `json:"data_base64,omitempty" jsonschema:"oneof_required=data,description=binary data to hash as standard base64"`
}

func sha256Digest(a sha256Args) (digest, error) {
	msg, err := oneOf("text", a.Text, "data_base64", a.DataBase64)
	if err != nil {
		return digest{}, err
	}
	sum := sha256.Sum256(msg)
	return newDigest(sum[:]), nil
}

type hmacArgs struct {
	Key        *string `json:"key,omitempty" jsonschema:"description=secret key as UTF-8 text"`
	KeyBase64  *string `json:"key_base64,omitempty" jsonschema:"description=secret key as standard base64"`
	Text       *string `json:"text,omitempty" jsonschema:"description=message as UTF-8 text"`
	DataBase64 *string `json:"data_base64,omitempty" jsonschema:"description=message as standard base64"`
}

// JSONSchemaExtend states "exactly one of each pair" in the input schema,
// which the oneof_required tag cannot do for two independent pairs.
func (hmacArgs) JSONSchemaExtend(s *guest.JSONSchema) {
	pair := func(a, b string) *guest.JSONSchema {
		return &guest.JSONSchema{OneOf: []*guest.JSONSchema{{Required: []string{a}}, {Required: []string{b}}}}
	}
	s.AllOf = append(s.AllOf, pair("key", "key_base64"), pair("text", "data_base64"))
}

func hmacDigest(a hmacArgs) (digest, error) {
	key, err := oneOf("key", a.Key, "key_base64", a.KeyBase64)
	if err != nil {
		return digest{}, err
	}
	msg, err := oneOf("text", a.Text, "data_base64", a.DataBase64)
	if err != nil {
		return digest{}, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write(msg)
	return newDigest(mac.Sum(nil)), nil
}

// oneOf returns the bytes of whichever of a text field and a base64 field is
// set, and a schema error when both or neither are.
func oneOf(textName string, text *string, b64Name string, b64 *string) ([]byte, error) {
	switch {
	case text != nil && b64 != nil:
		return nil, guest.Schemaf("pass %s or %s, not both", textName, b64Name)
	case text != nil:
		return []byte(*text), nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, guest.Schemaf("%s is not standard base64: %v", b64Name, err)
		}
		return b, nil
	}
	return nil, guest.Schemaf("pass one of %s and %s", textName, b64Name)
}

type uuidArgs struct {
	Count int `json:"count,omitempty" jsonschema:"minimum=1,maximum=100,default=1,description=how many UUIDs to generate"`
}

type uuidResult struct {
	UUIDs []string `json:"uuids"`
}

func uuidV4(a uuidArgs) (uuidResult, error) {
	n := a.Count
	switch {
	case n == 0:
		n = 1
	case n < 0 || n > 100:
		return uuidResult{}, guest.Schemaf("count must be between 1 and 100, got %d", n)
	}
	res := uuidResult{UUIDs: make([]string, n)}
	for i := range res.UUIDs {
		var u [16]byte
		// Under WASI this is random_get: the host decides how random it is.
		// Since Go 1.24 Read never returns an error.
		rand.Read(u[:])
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // variant 10 (RFC 9562)
		h := hex.EncodeToString(u[:])
		res.UUIDs[i] = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	return res, nil
}
