package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

func TestManifest(t *testing.T) {
	pure := tooltest.Flags{Idempotent: true, ReadOnly: true, TimeoutMS: 5000}
	tooltest.CheckManifest(t, map[string]tooltest.Flags{
		"hash.sha256": pure, "hash.hmac_sha256": pure, "encode.base64": pure, "decode.base64": pure,
		"uuid.v4": {Idempotent: false, ReadOnly: true, TimeoutMS: 5000},
	})
}

const (
	emptySHA = `{"hex":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",` +
		`"base64":"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="}`
	abcSHA = `{"hex":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",` +
		`"base64":"ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="}`
	// RFC 4231 test cases 1 and 2.
	rfc4231Case1 = `{"hex":"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",` +
		`"base64":"sDRMYdjbOFNcqK/OrwvxK4gdwgDJgz2nJuk3bC4yz/c="}`
	rfc4231Case2 = `{"hex":"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",` +
		`"base64":"W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM="}`
)

func TestDigests(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "sha256 of empty text", Tool: "hash.sha256", Args: `{"text":""}`, Want: emptySHA},
		{Name: "sha256 of abc", Tool: "hash.sha256", Args: `{"text":"abc"}`, Want: abcSHA},
		{Name: "sha256 of base64 data", Tool: "hash.sha256", Args: `{"data_base64":"YWJj"}`, Want: abcSHA},
		{Name: "sha256 of empty data", Tool: "hash.sha256", Args: `{"data_base64":""}`, Want: emptySHA},
		{Name: "sha256 bad base64", Tool: "hash.sha256", Args: `{"data_base64":"YW!j"}`,
			Kind: abi.KindSchema, Msg: "data_base64 is not standard base64: illegal base64 data at input byte 2"},
		{Name: "sha256 both inputs", Tool: "hash.sha256", Args: `{"text":"a","data_base64":"YQ=="}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "pass text or data_base64, not both"},
		{Name: "sha256 no input", Tool: "hash.sha256", Args: `{}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "pass one of text and data_base64"},
		{Name: "hmac binary key", Tool: "hash.hmac_sha256",
			Args: `{"key_base64":"CwsLCwsLCwsLCwsLCwsLCwsLCws=","text":"Hi There"}`, Want: rfc4231Case1},
		{Name: "hmac binary key and data", Tool: "hash.hmac_sha256",
			Args: `{"key_base64":"CwsLCwsLCwsLCwsLCwsLCwsLCws=","data_base64":"SGkgVGhlcmU="}`, Want: rfc4231Case1},
		{Name: "hmac text key", Tool: "hash.hmac_sha256",
			Args: `{"key":"Jefe","text":"what do ya want for nothing?"}`, Want: rfc4231Case2},
		{Name: "hmac both keys", Tool: "hash.hmac_sha256", Args: `{"key":"a","key_base64":"YQ==","text":"x"}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "pass key or key_base64, not both"},
		{Name: "hmac no key", Tool: "hash.hmac_sha256", Args: `{"text":"x"}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "pass one of key and key_base64"},
		{Name: "hmac no message", Tool: "hash.hmac_sha256", Args: `{"key":"k"}`,
			Rejected: true, Kind: abi.KindSchema, Msg: "pass one of text and data_base64"},
	})
}

func TestBase64(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "encode std by default", Tool: "encode.base64", Args: `{"text":"<<???>>"}`, Want: `{"base64":"PDw/Pz8+Pg=="}`},
		{Name: "encode url", Tool: "encode.base64", Args: `{"text":"<<???>>","variant":"url"}`, Want: `{"base64":"PDw_Pz8-Pg=="}`},
		{Name: "encode raw url", Tool: "encode.base64", Args: `{"text":"<<???>>","variant":"raw_url"}`, Want: `{"base64":"PDw_Pz8-Pg"}`},
		{Name: "encode raw std", Tool: "encode.base64", Args: `{"text":"a","variant":"raw_std"}`, Want: `{"base64":"YQ"}`},
		{Name: "encode unknown variant", Tool: "encode.base64", Args: `{"text":"a","variant":"hex"}`,
			Rejected: true, Kind: abi.KindSchema, Msg: `got "hex"`},
		{Name: "decode auto std", Tool: "decode.base64", Args: `{"data":"PDw/Pz8+Pg=="}`,
			Want: `{"bytes":7,"utf8":true,"text":"<<???>>"}`},
		{Name: "decode auto url raw", Tool: "decode.base64", Args: `{"data":"PDw_Pz8-Pg"}`,
			Want: `{"bytes":7,"utf8":true,"text":"<<???>>"}`},
		{Name: "decode auto ignores wrapping", Tool: "decode.base64", Args: `{"data":"  PDw/Pz8+\n  Pg==\n"}`,
			Want: `{"bytes":7,"utf8":true,"text":"<<???>>"}`},
		{Name: "decode binary gives hex", Tool: "decode.base64", Args: `{"data":"+//+"}`,
			Want: `{"bytes":3,"utf8":false,"hex":"fbfffe"}`},
		{Name: "decode empty", Tool: "decode.base64", Args: `{"data":""}`, Want: `{"bytes":0,"utf8":true,"text":""}`},
		{Name: "decode strict std refuses url alphabet", Tool: "decode.base64", Args: `{"data":"PDw_Pz8-Pg==","variant":"std"}`,
			Kind: abi.KindSchema, Msg: "data is not std base64: illegal base64 data at input byte 3"},
		{Name: "decode strict raw refuses padding", Tool: "decode.base64", Args: `{"data":"YQ==","variant":"raw_std"}`,
			Kind: abi.KindSchema, Msg: "not raw_std base64"},
		{Name: "decode garbage", Tool: "decode.base64", Args: `{"data":"not base64!"}`,
			Kind: abi.KindSchema, Msg: "not raw_std base64"},
	})
}

var uuidV4Form = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUUID(t *testing.T) {
	uuids := func(want int) func(*testing.T, []byte) {
		return func(t *testing.T, r []byte) {
			var res uuidResult
			if err := json.Unmarshal(r, &res); err != nil || len(res.UUIDs) != want {
				t.Fatalf("want %d UUIDs, got %s (%v)", want, r, err)
			}
			seen := map[string]bool{}
			for _, u := range res.UUIDs {
				if !uuidV4Form.MatchString(u) || seen[u] {
					t.Fatalf("bad or repeated v4 UUID %q in %s", u, r)
				}
				seen[u] = true
			}
		}
	}
	tooltest.Run(t, []tooltest.Case{
		{Name: "one by default", Tool: "uuid.v4", Args: `{}`, Check: uuids(1)},
		{Name: "a hundred", Tool: "uuid.v4", Args: `{"count":100}`, Check: uuids(100)},
		{Name: "too many", Tool: "uuid.v4", Args: `{"count":101}`, Rejected: true, Kind: abi.KindSchema, Msg: "between 1 and 100"},
		{Name: "zero", Tool: "uuid.v4", Args: `{"count":0}`, Rejected: true},
	})
}
