package main

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi/guest"
)

var variants = map[string]*base64.Encoding{
	"std":     base64.StdEncoding,
	"url":     base64.URLEncoding,
	"raw_std": base64.RawStdEncoding,
	"raw_url": base64.RawURLEncoding,
}

type encodeArgs struct {
	Text    string `json:"text" jsonschema:"description=the text to encode (its UTF-8 bytes)"`
	Variant string `json:"variant,omitempty" jsonschema:"enum=std,enum=url,enum=raw_std,enum=raw_url,default=std,description=alphabet and padding"`
}

type encodeResult struct {
	Base64 string `json:"base64"`
}

func encodeBase64(a encodeArgs) (encodeResult, error) {
	v := a.Variant
	if v == "" {
		v = "std"
	}
	enc, ok := variants[v]
	if !ok {
		return encodeResult{}, guest.Schemaf("variant must be std, url, raw_std or raw_url, got %q", v)
	}
	return encodeResult{Base64: enc.EncodeToString([]byte(a.Text))}, nil
}

type decodeArgs struct {
	Data    string `json:"data" jsonschema:"description=the base64 to decode"`
	Variant string `json:"variant,omitempty" jsonschema:"enum=auto,enum=std,enum=url,enum=raw_std,enum=raw_url,default=auto,description=alphabet and padding; auto detects both"`
}

type decodeResult struct {
	Bytes int     `json:"bytes" jsonschema:"description=number of decoded bytes"`
	UTF8  bool    `json:"utf8" jsonschema:"description=whether the bytes are valid UTF-8"`
	Text  *string `json:"text,omitempty" jsonschema:"description=the decoded bytes as text when they are valid UTF-8"`
	Hex   string  `json:"hex,omitempty" jsonschema:"description=the decoded bytes in hex when they are not valid UTF-8"`
}

func decodeBase64(a decodeArgs) (decodeResult, error) {
	data, v := a.Data, a.Variant
	if v == "" || v == "auto" {
		// Base64 pasted from mail, PEM or a terminal is wrapped and
		// indented; the two alphabets differ only in + / versus - _.
		data = strings.Map(func(r rune) rune {
			if unicode.IsSpace(r) {
				return -1
			}
			return r
		}, data)
		v = "std"
		if strings.ContainsAny(data, "-_") {
			v = "url"
		}
		if !strings.HasSuffix(data, "=") {
			v = "raw_" + v
		}
	}
	enc, ok := variants[v]
	if !ok {
		return decodeResult{}, guest.Schemaf("variant must be auto, std, url, raw_std or raw_url, got %q", a.Variant)
	}
	b, err := enc.DecodeString(data)
	if err != nil {
		return decodeResult{}, guest.Schemaf("data is not %s base64: %v", v, err)
	}
	res := decodeResult{Bytes: len(b), UTF8: utf8.Valid(b)}
	if res.UTF8 {
		text := string(b)
		res.Text = &text
	} else {
		res.Hex = hex.EncodeToString(b)
	}
	return res, nil
}
