package extism

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/third_party/wazero/api"
)

// httpRequestMeta is the request document Extism PDKs write.
type httpRequestMeta struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// EgressError is a plugin's http_request that the host refused or that
// found no answer: Extism's http_request has no way to return an error,
// so the call stops with it.
type EgressError struct {
	URL string
	Err *abi.EgressError
}

func (e *EgressError) Error() string {
	return fmt.Sprintf("http_request to %s: %s (%s)", e.URL, e.Err.Message, e.Err.Kind)
}

// httpRequest is extism:host/env http_request(req, body i64) -> i64.
//
//	kernel memory: the block at req   the request JSON {url, method, headers} (read)
//	               the block at body  the request body, when body is not 0 (read)
//	result:        the offset of a new block holding the response body; 0
//	               when the body is empty
//
// The blocks are left to the plugin: go-pdk frees them itself after the
// call, and freeing them here too could free a block reused meanwhile
// (the response's). The request goes through toolhost's egress (toolhostv1.Do) under the
// calling module's grant. A refusal, or a request that got no answer,
// stops the call with an *EgressError.
func httpRequest(ctx context.Context, k *Kernel, mod api.Module, s []uint64) {
	k.status, k.headers = 0, nil
	var meta httpRequestMeta
	if err := json.Unmarshal(k.block(s[0], "http_request"), &meta); err != nil {
		k.stop(fmt.Errorf("http_request: the request is not Extism's JSON {url, method, headers}: %v", err))
	}
	req := abi.HTTPRequest{Method: meta.Method, URL: meta.URL}
	if len(meta.Headers) > 0 {
		req.Headers = make(map[string][]string, len(meta.Headers))
		for name, v := range meta.Headers {
			req.Headers[name] = []string{v}
		}
	}
	if s[1] != 0 {
		body := k.block(s[1], "http_request")
		if utf8.Valid(body) {
			req.Body = string(body)
		} else {
			req.BodyBase64 = base64.StdEncoding.EncodeToString(body)
		}
	}
	resp, eerr := toolhostv1.Do(ctx, req)
	if eerr != nil {
		k.stop(&EgressError{URL: meta.URL, Err: eerr})
	}
	k.status = int32(resp.Status)
	k.headers = make(map[string]string, len(resp.Headers))
	for name, vs := range resp.Headers {
		k.headers[strings.ToLower(name)] = strings.Join(vs, ",")
	}
	body := []byte(resp.Body)
	if resp.BodyBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(resp.BodyBase64)
		if err != nil {
			k.stop(fmt.Errorf("http_request: decoding the response body: %v", err))
		}
		body = b
	}
	if len(body) == 0 {
		s[0] = 0
		return
	}
	s[0] = k.put(mod, body)
}

// httpHeaders is extism:host/env http_headers() -> i64: the offset of a
// new block with the last response's headers as a JSON object (names in
// lower case, values joined by commas), 0 when there was no response.
func httpHeaders(_ context.Context, k *Kernel, mod api.Module, s []uint64) {
	if k.headers == nil {
		s[0] = 0
		return
	}
	b, _ := json.Marshal(k.headers)
	s[0] = k.put(mod, b)
}
