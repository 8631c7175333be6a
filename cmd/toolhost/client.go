package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/spf13/cobra"
	"github.com/toolhost/toolhost/dispatcher"
)

const defaultServer = "http://127.0.0.1:7331/mcp"

// addServerFlag adds --server, defaulting to $TOOLHOST_URL, then the
// default address of `toolhost serve`.
func addServerFlag(cmd *cobra.Command, dst *string) {
	def := os.Getenv("TOOLHOST_URL")
	if def == "" {
		def = defaultServer
	}
	cmd.Flags().StringVar(dst, "server", def, "MCP endpoint of a running toolhost serve ($TOOLHOST_URL)")
}

// connect opens an MCP session to url. Reconnection retries are off: a
// shell command should fail fast when the server is not there.
func connect(ctx context.Context, url string) (*mcp.ClientSession, error) {
	return connectWith(ctx, url, mcp.NewClient(&mcp.Implementation{Name: "toolhost-cli", Version: version}, nil))
}

// connectWith is connect with a client of the caller's making.
func connectWith(ctx context.Context, url string, client *mcp.Client) (*mcp.ClientSession, error) {
	note := &refusalNote{next: httpClient().Transport}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1,
		DisableStandaloneSSE: true, HTTPClient: &http.Client{Transport: note}}, nil)
	if err != nil {
		if strings.Contains(err.Error(), "Unauthorized") {
			return nil, fmt.Errorf("toolhost at %s refused the request: 401 Unauthorized (set TOOLHOST_TOKEN to a token it accepts)%s: %w", url, note.why(), err)
		}
		if strings.Contains(err.Error(), "Forbidden") {
			return nil, fmt.Errorf("toolhost at %s refused the request: 403 Forbidden%s: %w", url, note.why(), err)
		}
		return nil, fmt.Errorf("cannot reach toolhost at %s (is `toolhost serve` running?): %w", url, err)
	}
	return cs, nil
}

// writeEnvelope writes a DispatchError as one JSON object and a newline.
func writeEnvelope(w io.Writer, de *dispatcher.DispatchError) {
	b, _ := json.Marshal(de)
	fmt.Fprintf(w, "%s\n", safeJSON(b))
}

// clientFault is the envelope for a failure on the way to the tool: no
// server, a broken connection, a protocol error.
func clientFault(err error) *dispatcher.DispatchError {
	return &dispatcher.DispatchError{Kind: dispatcher.KindInternal, Message: err.Error(),
		JSONRPCCode: dispatcher.KindInternal.Code()}
}

// httpClient sends $TOOLHOST_TOKEN as a bearer token when it is set. The
// token comes from the environment, not a flag, so it does not show in
// process listings or shell history.
func httpClient() *http.Client {
	token := os.Getenv("TOOLHOST_TOKEN")
	if token == "" {
		return http.DefaultClient
	}
	return &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// refusalNote keeps the reason a 401 or 403 gave in its WWW-Authenticate
// error_description ("the token is for audience …"), which the SDK's
// error leaves out. It is safe for concurrent use.
type refusalNote struct {
	next http.RoundTripper // nil means http.DefaultTransport
	mu   sync.Mutex
	desc string
}

func (n *refusalNote) RoundTrip(r *http.Request) (*http.Response, error) {
	next := n.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		if chs, perr := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); perr == nil {
			for _, c := range chs {
				if d := c.Params["error_description"]; d != "" {
					n.mu.Lock()
					n.desc = d
					n.mu.Unlock()
				}
			}
		}
	}
	return resp, err
}

// why is ": " and the last refusal's description, or "".
func (n *refusalNote) why() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.desc == "" {
		return ""
	}
	return ": " + n.desc
}
