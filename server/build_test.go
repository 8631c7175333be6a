package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/host"
)

// Build reads the file Config names when File is nil, and a file it
// cannot use stops it with the file's own error, line included.
func TestBuildReadsTheConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(path, []byte("[dispatch]\nmax_retry_after = \"soon\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := Default()
	s.Plugins, s.CacheDir, s.Addr, s.Config = t.TempDir(), "off", "127.0.0.1:0", path
	srv, err := Build(context.Background(), s)
	if err == nil {
		srv.Close()
		t.Fatal("a file with a bad value was accepted")
	}
	if want := path + ":2: dispatch.max_retry_after:"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q; want it to start %q", err, want)
	}
}

// Settings no server can run with are refused before anything starts,
// naming the flag.
func TestBuildRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Reuse = "sometimes" }, "--reuse must be"},
		{func(s *Settings) { s.ToolNames = "short" }, "--tool-names must be"},
		{func(s *Settings) { s.Operators = []string{"a\x07"} }, "--operator: "},
		{func(s *Settings) { s.Addr = "0.0.0.0:0" }, "refusing to serve on 0.0.0.0:0 without authentication"},
	} {
		s := Default()
		s.Plugins, s.CacheDir, s.Addr = t.TempDir(), "off", "127.0.0.1:0"
		tc.set(&s)
		srv, err := Build(context.Background(), s)
		if err == nil {
			srv.Close()
			t.Errorf("%s: accepted", tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %q; want %q", err, tc.want)
		}
	}
}

// The runtime's flags reach host.Config, and --interpret only with
// --lazy (the defaults have both).
func TestRuntimeConfig(t *testing.T) {
	for _, tc := range []struct {
		lazy, interpret, want bool
	}{{true, true, true}, {true, false, false}, {false, true, false}} {
		s := Default()
		s.Lazy, s.Interpret, s.Reuse, s.MaxFresh = tc.lazy, tc.interpret, "never", 3
		hc := s.runtimeConfig(host.Config{CacheDir: "kept"})
		if hc.Interpret != tc.want || hc.Lazy != tc.lazy || !hc.Reuse.Off || hc.MaxFresh != 3 || hc.CacheDir != "kept" {
			t.Errorf("lazy %v, interpret %v: %+v; want Interpret %v", tc.lazy, tc.interpret, hc, tc.want)
		}
	}
	if d := Default(); !d.Lazy || !d.Interpret || !d.runtimeConfig(host.Config{}).Interpret {
		t.Error("the defaults do not run cold calls on the interpreter")
	}
}
