package server

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/toolhost/toolhost/internal/config"
)

// served is the Settings serve runs with for the file c and the command
// line args.
func served(t *testing.T, c *config.Config, args ...string) Settings {
	t.Helper()
	var s Settings
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	s.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s.File = c
	s.applyFile(fs.Changed)
	return s
}

func parse(t *testing.T, src string) *config.Config {
	t.Helper()
	c, err := config.Parse("x.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFileYieldsToFlags: every key the file shares with a flag sets the
// flag the command line left alone, and loses to one it gave.
func TestFileYieldsToFlags(t *testing.T) {
	c := parse(t, "[runtime]\nlazy = false\nmax_fresh = 3\nmax_resident = 7\n[http]\nmax_conns_per_peer = 9\n[redis]\nurl = \"redis://file:6379\"\n")
	s := served(t, c, "--max-fresh=5", "--max-conns-per-peer=0")
	if s.Lazy || s.MaxFresh != 5 || s.MaxResident != 7 || !s.WarmUp || s.MaxConnsPerPeer != 0 || s.Redis != "redis://file:6379" {
		t.Fatalf("lazy=%v maxFresh=%d maxResident=%d warmUp=%v maxConnsPerPeer=%d redis=%q; "+
			"want false (the file), 5 (the flag), 7 (the file), true (the default), 0 (the flag), the file's URL",
			s.Lazy, s.MaxFresh, s.MaxResident, s.WarmUp, s.MaxConnsPerPeer, s.Redis)
	}
	if s := served(t, c, "--redis=redis://flag:6379"); s.Redis != "redis://flag:6379" || s.MaxConnsPerPeer != 9 {
		t.Fatalf("redis %q, max-conns-per-peer %d; want the flag's URL and the file's 9", s.Redis, s.MaxConnsPerPeer)
	}
	if s, d := served(t, nil), Default(); s.Lazy != d.Lazy || s.MaxConnsPerPeer != d.MaxConnsPerPeer {
		t.Fatalf("no file: %+v; want the defaults", s)
	}
}

// TestFlagKeysAreCheckerKeys: every config key the flag table names is one
// the checker knows, in the section it names (a renamed key would leave a
// flag that the file silently no longer sets).
func TestFlagKeysAreCheckerKeys(t *testing.T) {
	n := 0
	for _, f := range Flags() {
		if f.Key == "" {
			continue
		}
		n++
		section, key, ok := strings.Cut(f.Key, " ")
		if !ok {
			t.Fatalf("%s: key %q is not \"[section] key\"", f.Name, f.Key)
		}
		src := section + "\n" + key + " = 0\n"
		_, err := config.Parse("x.toml", []byte(src))
		if err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("--%s names %s, which the checker does not know: %v", f.Name, f.Key, err)
		}
	}
	if n == 0 {
		t.Fatal("no flag names a config key")
	}
}
