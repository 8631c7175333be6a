package main

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// webUpstream is a local TLS server with the pages the web.fetch tests
// read. Its certificate is trusted by the server under test through
// SSL_CERT_FILE, the standard way to add a root on Linux.
func webUpstream(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	article, err := os.ReadFile(filepath.Join(testwasm.Root(t), "tools-src", "web", "testdata", "article.html"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(article)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusFound)
	})
	mux.HandleFunc("/busy", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(strings.Repeat("x", 5<<20)))
	})
	mux.HandleFunc("/image.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	})
	mux.HandleFunc("/long.txt", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte(strings.Repeat("0123456789", 5000)))
	})
	up := httptest.NewTLSServer(mux)
	t.Cleanup(up.Close)
	pemFile := filepath.Join(t.TempDir(), "upstream.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw})
	if err := os.WriteFile(pemFile, block, 0o644); err != nil {
		t.Fatal(err)
	}
	return up, pemFile
}

// webConfig is examples/web.toml, the grant the README tells users to
// serve with, plus allow_networks for the loopback upstream.
func webConfig(t *testing.T, loopback bool) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testwasm.Root(t), "examples", "web.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if i := strings.LastIndex(text, "\n["); i < 0 || !strings.HasPrefix(text[i+1:], `[grants."web.wasm"]`) {
		t.Fatalf("examples/web.toml must end with the web.wasm grant for this test to extend it:\n%s", text)
	}
	if loopback {
		text += "allow_networks = [\"127.0.0.0/8\"]\n"
	}
	p := filepath.Join(t.TempDir(), "web.toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// webPlugins is a plugins folder with the web module as web.wasm, the
// file name its grant names.
func webPlugins(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(testwasm.Go(t, "./tools-src/web"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

type webPage struct {
	FinalURL    string `json:"final_url"`
	Status      int
	ContentType string `json:"content_type"`
	Title       string
	Content     string
	NextIndex   int `json:"next_index"`
	TotalLength int `json:"total_length"`
	Truncated   bool
}

// TestWebFetch: web.fetch through `toolhost serve --config
// examples/web.toml`, the upstream a local TLS server. Pages come back as
// Markdown after redirects with the final URL; 429 is transient with the
// upstream's Retry-After; oversized and non-text bodies are refused with
// errors that say why; paging walks a long body.
func TestWebFetch(t *testing.T) {
	up, pemFile := webUpstream(t)
	plugins := webPlugins(t)
	srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile}, plugins, "--config", webConfig(t, true))

	call := func(t *testing.T, args map[string]any) (webPage, string, int) {
		t.Helper()
		b, _ := json.Marshal(args)
		out, errOut, code := srv.cli(t, "call", "web.fetch", string(b))
		var p webPage
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("%s: %v", out, err)
			}
		}
		return p, errOut, code
	}

	t.Run("redirect to markdown", func(t *testing.T) {
		p, errOut, code := call(t, map[string]any{"url": up.URL + "/moved"})
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		golden, _ := os.ReadFile(filepath.Join(testwasm.Root(t), "tools-src", "web", "testdata", "article.html.markdown.golden"))
		if p.FinalURL != up.URL+"/article" || p.Status != 200 || !strings.HasPrefix(p.ContentType, "text/html") ||
			!strings.HasPrefix(p.Title, "Sandboxing tools") {
			t.Errorf("page = %+v", p)
		}
		// Links are made absolute against the final URL's host.
		want := strings.ReplaceAll(string(golden), "https://blog.example.com", up.URL)
		if p.Content != want {
			t.Errorf("content differs from the golden file:\n%s", p.Content)
		}
	})
	t.Run("429 is transient with retry_after", func(t *testing.T) {
		_, errOut, code := call(t, map[string]any{"url": up.URL + "/busy"})
		var env struct {
			Kind     string
			Attempts int
		}
		_ = json.Unmarshal([]byte(errOut), &env)
		if code == 0 || env.Kind != "transient" || env.Attempts != 3 || !strings.Contains(errOut, "429") {
			t.Errorf("exit %d, envelope %s; want transient after 3 attempts", code, errOut)
		}
	})
	t.Run("oversized body", func(t *testing.T) {
		_, errOut, code := call(t, map[string]any{"url": up.URL + "/huge"})
		if code == 0 || !strings.Contains(errOut, `"kind":"schema"`) || !strings.Contains(errOut, "larger than this server lets web.fetch read") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("non-text type", func(t *testing.T) {
		_, errOut, code := call(t, map[string]any{"url": up.URL + "/image.png"})
		if code == 0 || !strings.Contains(errOut, "image/png, which web.fetch does not return") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("paging", func(t *testing.T) {
		var got strings.Builder
		next, pages := 0, 0
		for {
			p, errOut, code := call(t, map[string]any{"url": up.URL + "/long.txt", "max_bytes": 20000, "start_index": next})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got.WriteString(p.Content)
			pages++
			if !p.Truncated {
				break
			}
			next = p.NextIndex
		}
		if pages != 3 || got.String() != strings.Repeat("0123456789", 5000) {
			t.Errorf("%d pages, %d bytes", pages, got.Len())
		}
	})
}

// TestWebFetchGrants: without a grant the error names the config to add;
// with the example grant as shipped, a loopback (not public) address is
// refused before any connection.
func TestWebFetchGrants(t *testing.T) {
	up, pemFile := webUpstream(t)
	plugins := webPlugins(t)
	t.Run("no grant", func(t *testing.T) {
		srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile}, plugins)
		_, errOut, code := srv.cli(t, "call", "web.fetch", `{"url":"`+up.URL+`/article"}`)
		if code == 0 || !strings.Contains(errOut, "toolhost serve --config examples/web.toml") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
	t.Run("private address refused", func(t *testing.T) {
		srv := startServerEnv(t, []string{"SSL_CERT_FILE=" + pemFile}, plugins, "--config", webConfig(t, false))
		_, errOut, code := srv.cli(t, "call", "web.fetch", `{"url":"`+up.URL+`/article"}`)
		if code == 0 || !strings.Contains(errOut, "127.0.0.1") || !strings.Contains(errOut, "allow_networks") {
			t.Errorf("exit %d: %s", code, errOut)
		}
	})
}
