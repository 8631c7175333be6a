// Command egress is a test tool module that reaches the network through
// the host's governed egress (guest.Client). The host's egress tests and
// the storm simulation (toolhost-storm) use it. Build it from the
// repository root with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o egress.wasm ./host/testdata/egress
//
// (the tests build it on demand through internal/testkit/testwasm).
package main

import (
	"fmt"

	"github.com/toolhost/toolhost/abi/guest"
)

// FetchArgs is one request.
type FetchArgs struct {
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// FailStatus makes a 5xx answer the call's error (transient), as a
	// tool that reads pages does.
	FailStatus bool `json:"fail_status,omitempty"`
}

// FetchResult is everything the guest saw of the answer.
type FetchResult struct {
	Status  int                 `json:"status"`
	Headers map[string][]string `json:"headers"`
	Body    string              `json:"body"`
}

func init() {
	guest.Register("egress.fetch", guest.Options{
		Description: "Sends one HTTP request through the host's governed egress and returns what came back.",
		TimeoutMS:   5000,
		Idempotent:  true,
	}, func(a FetchArgs) (FetchResult, error) {
		req := guest.NewRequest(a.Method, a.URL, []byte(a.Body))
		for k, v := range a.Headers {
			req.Header.Set(k, v)
		}
		resp, err := guest.DefaultClient.Do(req)
		if err != nil {
			return FetchResult{}, err
		}
		if a.FailStatus && resp.StatusCode >= 500 {
			return FetchResult{}, guest.Transient(fmt.Errorf("%s answered %d", a.URL, resp.StatusCode))
		}
		return FetchResult{Status: resp.StatusCode, Headers: resp.Header, Body: string(resp.Body)}, nil
	})
}

func main() {}
