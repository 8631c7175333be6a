package config

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/internal/hostconf"
)

const fullFile = `# toolhost config: every key
[dispatch]
concurrency = 8            # per tool
global_concurrency = 64
queue_timeout = "30s"
idempotency_ttl = "60s"

[breaker]                  # defaults for every tool
failures = 5
window = "30s"
cooldown = "30s"
jitter = 0.25
probes = 2

[limits]                   # defaults for every tool
memory = "64MiB"
output = "1MiB"
log = 65536

[tools."db.write"]
timeout = "5s"
idempotent = false
read_only = false
concurrency = 2
memory = "32MiB"
output = "256KiB"
  [tools."db.write".breaker]
  failures = 3
  cooldown = "1m"
  jitter = 0

[tools]
"text.upper" = { timeout = "250ms", read_only = true, log = "4KB" }
'math.add' = { idempotent = true }
`

func ptr[T any](v T) *T { return &v }

func TestParseFull(t *testing.T) {
	c, err := Parse("toolhost.toml", []byte(fullFile))
	if err != nil {
		t.Fatal(err)
	}

	want := &Config{
		Dispatch: Dispatch{Config: dispatcher.Config{Concurrency: 8, GlobalConcurrency: 64, QueueTimeout: 30 * time.Second, IdempotencyTTL: time.Minute}},
		Breaker:  breaker.Settings{Failures: 5, Window: 30 * time.Second, Cooldown: 30 * time.Second, Jitter: 0.25, Probes: 2},
		Limits:   hostconf.Limits{MemoryBytes: 64 << 20, OutputBytes: 1 << 20, LogBytes: 65536},
		Tools: map[string]Tool{
			"db.write": {
				Timeout: 5 * time.Second, Idempotent: ptr(false), ReadOnly: ptr(false), Concurrency: 2,
				Limits:  hostconf.Limits{MemoryBytes: 32 << 20, OutputBytes: 256 << 10},
				Breaker: breaker.Settings{Failures: 3, Cooldown: time.Minute, Jitter: -1}, // jitter = 0: none
			},
			"text.upper": {Timeout: 250 * time.Millisecond, ReadOnly: ptr(true), Limits: hostconf.Limits{LogBytes: 4000}},
			"math.add":   {Idempotent: ptr(true)},
		},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Parse:\n got %+v\nwant %+v", c, want)
	}

	if got := c.ToolNames(); !slices.Equal(got, []string{"db.write", "math.add", "text.upper"}) {
		t.Errorf("ToolNames = %q", got)
	}

	if got, want := c.HostLimits(), (hostconf.Limits{MemoryBytes: 64 << 20, OutputBytes: 1 << 20, LogBytes: 65536}); got != want {
		t.Errorf("HostLimits = %+v, want %+v", got, want)
	}

	// server's wiring_test.go checks what the dispatcher and the
	// loader get from this file.
}

func TestParseEmptyAndPartial(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "\n\n[dispatch]\n", "[tools]\n"} {
		c, err := Parse("x.toml", []byte(src))
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if !reflect.DeepEqual(c, &Config{}) {
			t.Errorf("Parse(%q) is not empty: %+v", src, c)
		}
		if c.HostLimits() != (hostconf.Limits{}) || len(c.ToolNames()) != 0 || !reflect.DeepEqual(c.GovernorConfig(), governor.Config{}) {
			t.Errorf("Parse(%q) is not empty: %+v", src, c)
		}
	}

	// Only what is set is set.
	c, err := Parse("x.toml", []byte("[breaker]\njitter = 0\n[tools.a.breaker]\nprobes = 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := (breaker.Settings{Jitter: -1}); c.Breaker != want {
		t.Errorf("Breaker = %+v, want %+v", c.Breaker, want)
	}
	if want := map[string]Tool{"a": {Breaker: breaker.Settings{Probes: 3}}}; !reflect.DeepEqual(c.Tools, want) {
		t.Errorf("Tools = %+v, want %+v", c.Tools, want)
	}
}

func TestNilConfig(t *testing.T) {
	var c *Config
	if c.HostLimits() != (hostconf.Limits{}) || c.ToolNames() != nil || !reflect.DeepEqual(c.GovernorConfig(), governor.Config{}) ||
		c.EgressGrants() != nil || c.OAuthConfig() != nil || c.Prefixes() != nil {
		t.Error("nil Config is not empty")
	}
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("a", 129)
	tests := []struct {
		name   string
		src    string
		line   int
		reason string
	}{
		// Syntax, from go-toml's DecodeError: its words, our lines.
		{"syntax", "[dispatch]\nconcurrency = 8\nqueue_timeout = \n", 3, "invalid TOML: unexpected character U+000A at start of value"},
		{"unclosed header", "[dispatch]\n\n[tools.\"x\"\n", 3, "invalid TOML: expected ']' to close table name"},
		{"string with newline", "a = 1\nb = \"abc\nc = 1\n", 2, "basic strings cannot have new lines"},
		{"missing equals", "[dispatch]\nconcurrency\n", 2, "invalid TOML: expected '=' after key"},
		{"duplicate key", "[dispatch]\nconcurrency = 1\nconcurrency = 2\n", 3, "invalid TOML: key concurrency is already defined"},
		{"duplicate table", "[tools.a]\n[tools.\"a\"]\n", 2, "invalid TOML"},
		{"integer overflow", "[dispatch]\n\nconcurrency = 99999999999999999999\n", 3, "invalid TOML"},

		// Unknown keys, wherever they are.
		{"unknown top", "# c\nretries = 3\n", 2, `unknown key "retries" at the top level (known keys: access, auth, breaker, dispatch, governor, grants, http, input, limits, modules, quotas, redis, registries, reuse, runtime, tools, trust)`},
		{"unknown section", "[dispatch]\n\n[breakers]\nfailures = 1\n", 3, `unknown key "breakers" at the top level; did you mean "breaker"?`},
		{"unknown dispatch", "[dispatch]\nconcurrency = 1\nconcurency = 2\n", 3, `dispatch.concurency: unknown key "concurency" in [dispatch]; did you mean "concurrency"?`},
		{"case", "[dispatch]\nQueue_Timeout = \"1s\"\n", 2, `did you mean "queue_timeout"?`},
		{"dash", "[tools.x]\nread-only = true\n", 2, `did you mean "read_only"?`},
		{"unknown tool key", "[tools.\"db.write\"]\ntimeout = \"1s\"\n\nretries = 3\n", 4, `tools."db.write".retries: unknown key "retries" in [tools."db.write"] (known keys: breaker, concurrency, description, expose, idempotent, log, max_timeout, memory, name, output, read_only, reuse, timeout)`},
		{"unknown in quoted dotted header", "[tools]\n[ tools . 'db.write' . breaker ]\nfailures = 3\nfailurs = 4\n", 4, `tools."db.write".breaker.failurs: unknown key "failurs" in [tools."db.write".breaker]; did you mean "failures"?`},
		{"unknown in inline table", "[tools]\n\"a.b\" = { timeout = \"1s\", retries = 3 }\n", 2, `tools."a.b".retries: unknown key "retries"`},
		{"unknown in multi-line inline table", "[tools]\n\"a.b\" = {\n  timeout = \"1s\", # fine\n\n  breaker = { probes = 1,\n    colldown = \"1s\" },\n}\n", 6, `tools."a.b".breaker.colldown: unknown key "colldown" in [tools."a.b".breaker]; did you mean "cooldown"?`},
		{"unknown via dotted key", "tools.\"x.y\".timeout = \"1s\"\ntools.\"x.y\".bogus = 1\n", 2, `tools."x.y".bogus: unknown key`},
		{"unknown after multi-line string", "note = \"\"\"\n[dispatch]\nconcurrency = 0\n\"\"\"\n", 1, `unknown key "note" at the top level`},
		{"unknown table after string with fake header", "[tools.a]\ntimeout = \"1s\" # [tools.b]\n[tools.a.breaker]\nx = '''\n[tools.c]\n'''\n", 4, `tools.a.breaker.x: unknown key "x"`},
		{"unknown inside array of tables", "[[tools.a.breaker]]\nfailures = 1\n", 1, "tools.a.breaker: must be a table ([tools.a.breaker]), not an array of tables"},

		// Wrong types.
		{"section not a table", "dispatch = 5\n", 1, "dispatch: must be a table ([dispatch]), not the integer 5"},
		{"tools array of tables", "[[tools]]\nname = \"x\"\n", 1, "tools: must be a table ([tools.\"NAME\"] sections), not an array of tables"},
		{"tool not a table", "[tools]\ntimeout = \"5s\"\n", 2, `tools.timeout: must be a table of settings for tool "timeout" ([tools.timeout]), not the string "5s"`},
		{"count string", "[dispatch]\nconcurrency = \"8\"\n", 2, `dispatch.concurrency: must be a whole number, not the string "8"`},
		{"count float", "[breaker]\nfailures = 2.5\n", 2, "breaker.failures: must be a whole number, not the float 2.5"},
		{"flag string", "[tools.a]\n\nidempotent = \"yes\"\n", 3, `tools.a.idempotent: must be true or false, not the string "yes"`},
		{"duration integer", "[tools.a]\ntimeout = 5\n", 2, `tools.a.timeout: must be a duration string such as "250ms", "5s" or "1m", not the integer 5`},
		{"duration no unit", "[dispatch]\nqueue_timeout = \"30\"\n", 2, `"30" is not a duration`},
		{"duration bad", "[breaker]\nwindow = \"5 s\"\n", 2, `breaker.window: "5 s" is not a duration`},
		{"size float", "[limits]\nmemory = 1.5e8\n", 2, `limits.memory: must be a size (bytes, or a string such as "64MiB"), not the float 1.5e+08`},
		{"size bool", "[tools.a]\noutput = true\n", 2, "tools.a.output: must be a size"},
		{"jitter string", "[breaker]\njitter = \"0.2\"\n", 2, `breaker.jitter: must be a number between 0 and 1, not the string "0.2"`},
		{"datetime", "[tools.a]\ntimeout = 1979-05-27 07:32:00Z\n", 2, "not a date/time"},
		{"array", "[tools.a]\nconcurrency = [1, 2]\n", 2, "not an array"},
		{"breaker not table", "[tools.a]\nbreaker = 3\n", 2, "tools.a.breaker: must be a table ([tools.a.breaker]), not the integer 3"},

		// Out of range.
		{"concurrency zero", "[dispatch]\nconcurrency = 0\n", 2, "dispatch.concurrency: must be at least 1, not 0"},
		{"concurrency negative", "[tools.a]\nconcurrency = -2\n", 2, "tools.a.concurrency: must be at least 1, not -2"},
		{"global huge", "[dispatch]\nglobal_concurrency = 5_000_000\n", 2, "must be at most 1000000, not 5000000"},
		{"probes zero", "[tools.a.breaker]\nprobes = 0\n", 2, "tools.a.breaker.probes: must be at least 1"},
		{"duration zero", "[dispatch]\nidempotency_ttl = \"0s\"\n", 2, `dispatch.idempotency_ttl: must be greater than zero, not "0s"`},
		{"duration negative", "[tools.a.breaker]\ncooldown = \"-1m\"\n", 2, `must be greater than zero, not "-1m"`},
		{"memory below", "[limits]\nmemory = \"2MiB\"\n", 2, "limits.memory: 2 MiB is below the 4 MiB minimum (a Go guest needs about 3.25 MiB to start)"},
		{"memory just below", "[tools.a]\nmemory = 4194303\n", 2, "4194303 bytes is below the 4 MiB minimum"},
		{"memory above", "[tools.a]\nmemory = \"5GiB\"\n", 2, "tools.a.memory: 5 GiB is above the 4 GiB maximum"},
		{"memory SI above", "[limits]\nmemory = \"4295MB\"\n", 2, "4295000000 bytes is above the 4 GiB maximum"},
		{"memory zero", "[limits]\nmemory = 0\n", 2, "limits.memory: must be greater than zero"},
		{"memory negative", "[limits]\nmemory = -1\n", 2, "limits.memory: must be a size, not -1"},
		{"output zero", "[tools.a]\noutput = \"0KiB\"\n", 2, "tools.a.output: must be greater than zero"},
		{"output too big", "[limits]\noutput = \"4GiB\"\n", 2, "limits.output: 4 GiB is 4 GiB or more"},
		{"log too big", "[limits]\nlog = 4294967296\n", 2, "limits.log: 4 GiB is 4 GiB or more"},
		{"size unit", "[limits]\nlog = \"64 mega\"\n", 2, `limits.log: "64 mega" is not a size: unknown unit "mega" (use B, KiB, MiB, GiB, KB, MB or GB)`},
		{"size fraction", "[limits]\nmemory = \"1.5GiB\"\n", 2, `want a whole number of units`},
		{"size no number", "[limits]\nmemory = \"MiB\"\n", 2, `"MiB" is not a size: want a whole number and a unit`},
		{"size overflow", "[limits]\nmemory = \"99999999999999999999\"\n", 2, "the number is too large"},
		{"size unit overflow", "[limits]\nmemory = \"99999999999999GiB\"\n", 2, "the number is too large"},
		{"jitter above", "[breaker]\njitter = 1.5\n", 2, "breaker.jitter: must be between 0 and 1, not 1.5"},
		{"jitter negative", "[tools.a.breaker]\njitter = -0.1\n", 2, "must be between 0 and 1, not -0.1"},
		{"jitter nan", "[breaker]\njitter = nan\n", 2, "must be between 0 and 1, not NaN"},

		// Tool names.
		{"tool name space", "[dispatch]\n[tools.\"bad name\"]\ntimeout = \"1s\"\n", 2, `tools."bad name": tool name "bad name" does not match ^[A-Za-z0-9_.-]{1,128}$`},
		{"tool name empty", "[tools.\"\"]\n", 1, `tool name "" does not match`},
		{"tool name too long", "\n[tools." + long + ".breaker]\nprobes = 1\n", 2, `tool name "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…" does not match`},
		{"tool name in inline table", "[tools]\nok = {}\n\"no/slash\" = { timeout = \"1s\" }\n", 3, `tool name "no/slash"`},
		{"tool name escaped", "[tools]\n\"a\\u0020b\" = {}\n", 2, `tools."a b": tool name "a b"`},

		// The first problem in the file is the one reported.
		{"first of several", "[tools.z]\nconcurrency = 0\n[tools.a]\nconcurrency = 0\n[dispatch]\nbogus = 1\n", 2, "tools.z.concurrency"},
		{"first on one line", "[tools]\nz = { timeout = \"0s\", concurrency = 0 }\n", 2, "tools.z.timeout"},
		{"name before its keys", "[tools.\"a b\"]\nconcurrency = 0\n", 1, "tool name"},
		{"CRLF", "[dispatch]\r\n\r\nconcurrency = 0\r\n", 3, "dispatch.concurrency: must be at least 1"},
		{"BOM", "\ufeff[dispatch]\nconcurrency = 0\n", 2, "dispatch.concurrency"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("toolhost.toml", []byte(tt.src))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if c != nil {
				t.Errorf("Parse returned a Config with an error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if e.File != "toolhost.toml" || e.Line != tt.line || !strings.Contains(e.Reason, tt.reason) {
				t.Errorf("got  %s:%d: %s\nwant %s:%d: …%s…", e.File, e.Line, e.Reason, "toolhost.toml", tt.line, tt.reason)
			}
			if want := "toolhost.toml:" + strconv.Itoa(tt.line) + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("Error() = %q, want prefix %q", err, want)
			}
		})
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"4096", 4096}, {"1B", 1}, {"64KiB", 64 << 10}, {"64MiB", 64 << 20}, {"4GiB", 4 << 30},
		{"64 MiB", 64 << 20}, {" 2KB ", 2000}, {"3kB", 3000}, {"5MB", 5e6}, {"1GB", 1e9}, {"0", 0},
	}
	for _, tt := range tests {
		if got, err := parseSize(tt.in); err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"", "MiB", "1.5MiB", "64mib", "64 M", "-1", "1e6", "64MiBs", "99999999999999999999"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "a.toml", Line: 3, Reason: "bad"}, "a.toml:3: bad"},
		{Error{File: "a.toml", Reason: "bad"}, "a.toml: bad"},
		{Error{Line: 2, Reason: "bad"}, "config:2: bad"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.toml")
	if err := os.WriteFile(good, []byte(fullFile), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Tools["db.write"].Concurrency != 2 {
		t.Errorf("Load: %+v", c)
	}

	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[dispatch]\nconcurrency = -1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(bad)
	if want := bad + ":2: dispatch.concurrency: must be at least 1, not -1"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load(bad) = %v, want %q", err, want)
	}

	missing := filepath.Join(dir, "missing.toml")
	_, err = Load(missing)
	var e *Error
	if !errors.As(err, &e) || e.File != missing || e.Line != 0 || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %#v", err)
	}
	if want := missing + ": cannot open: no such file or directory"; err.Error() != want {
		t.Errorf("Load(missing) = %q, want %q", err, want)
	}
}

// TestIndexKeys checks the key index built from go-toml's parser nodes, on
// the TOML a naive line search gets wrong.
func TestIndexKeys(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want map[string]int // keyString → line
	}{
		{"headers", "# [fake]\n[dispatch]\nconcurrency = 1 # x = 2\n\n[ tools . \"db.write\" . 'br.eak' ]\nfailures = 3\n",
			map[string]int{"dispatch": 2, "dispatch.concurrency": 3, "tools": 5, `tools."db.write"`: 5, `tools."db.write"."br.eak"`: 5, `tools."db.write"."br.eak".failures`: 6}},
		{"dotted keys", "a.\"b.c\" . d = 1\n\"e\" = 2\n'f g'.h = 3\n",
			map[string]int{"a": 1, `a."b.c"`: 1, `a."b.c".d`: 1, "e": 2, `"f g"`: 3, `"f g".h`: 3}},
		{"escapes", "\"a\\\"b\" = 1\n\"\\u0041\\x42\\e\" = 2\n'c\\d' = 3\n\"\\b\\t\\n\\f\\r\\\\\\U0001F600\" = 4\n",
			map[string]int{`"a\"b"`: 1, `"AB\u001b"`: 2, `"c\\d"`: 3, "\"\\b\\t\\n\\f\\r\\\\\U0001F600\"": 4}},
		{"inline tables", "[tools]\nx = { timeout = \"1s\", breaker = { probes = 1 } }\ny = {\n  # comment {\n  a.b = 1,\n  c = \"}\", # }\n\n  d = { e = 2 },\n}\nz = 3\n",
			map[string]int{"tools": 1, "tools.x": 2, "tools.x.timeout": 2, "tools.x.breaker": 2, "tools.x.breaker.probes": 2,
				"tools.y": 3, "tools.y.a": 5, "tools.y.a.b": 5, "tools.y.c": 6, "tools.y.d": 8, "tools.y.d.e": 8, "tools.z": 10}},
		{"multi-line strings", "a = \"\"\"\n[b]\nc = 1\n\\\"\"\"\nstill \\\ninside\"\"\"\"\"\nd = '''\ne = 1\n'''''\nf = \"x\\\"y\" # \"\"\"\ng = 1\n",
			map[string]int{"a": 1, "d": 7, "f": 10, "g": 11}},
		{"arrays", "a = [\n  1, # ]\n  \"]\",\n  [2, 3],\n  { k = 1 },\n]\nb = [{ x = 1 },\n     { y = 2 }]\nc = 1\n",
			map[string]int{"a": 1, "a.k": 5, "b": 7, "b.x": 7, "b.y": 8, "c": 9}},
		{"array of tables", "[[a]]\nb = 1\n[[a]]\nb = 2\nc = 3\n",
			// Each element's keys are also recorded under its index, so
			// that [[access]] rule 2's problems point into rule 2.
			map[string]int{"a": 1, "a.b": 2, "a.c": 5, `a."[0]"`: 1, `a."[0]".b`: 2, `a."[1]"`: 3, `a."[1]".b`: 4, `a."[1]".c`: 5}},
		{"datetimes", "t = { a = 1979-05-27 07:32:00Z, b = 1 }\nu = 1979-05-27\nv = 07:32:00\n",
			map[string]int{"t": 1, "t.a": 1, "t.b": 1, "u": 2, "v": 3}},
		{"implicit first mention", "[x.y.z]\n[x]\nk = 1\n",
			map[string]int{"x": 1, "x.y": 1, "x.y.z": 1, "x.k": 3}},
		{"CRLF and BOM", "\ufeff[a]\r\nb = 1\r\n\r\nc = 2\r\n",
			map[string]int{"a": 1, "a.b": 2, "a.c": 4}},
		{"empty key", "\"\" = 1\n[t]\n'' = 2\n",
			map[string]int{`""`: 1, "t": 2, `t.""`: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, idx, err := decode([]byte(strings.TrimPrefix(tt.src, "\ufeff")))
			if err != nil {
				t.Fatalf("test document is not TOML: %v", err)
			}
			got := make(map[string]int, len(idx))
			for k, p := range idx {
				got[k] = p.line
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("indexKeys:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

var fuzzSeeds = []string{
	fullFile,
	"",
	"[dispatch]\nconcurrency = 0\n",
	"[tools]\n\"a.b\" = {\n  timeout = \"1s\", # c\n  breaker = { probes = 1 },\n}\n",
	"a = \"\"\"\n[b]\nc = 1\"\"\"\"\"\n[tools.'x y']\nmemory = \"3MiB\"\n",
	"[[tools]]\n[limits]\nmemory = 1.5\n",
	"tools.a.breaker.jitter = nan\n",
	"x = [{a = 1979-05-27 07:32:00Z}, [1, '2']]\n",
}

// FuzzParse checks that Parse never panics, that every error it returns is
// an *Error with a line in the file, that a Config it returns is usable, and
// that every key position is in the file.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 1 + bytes.Count(data, []byte("\n"))
		for k, p := range indexKeys(data).keys {
			if p.line < 1 || p.line > lines || p.off < 0 || p.off > len(data) {
				t.Fatalf("key %s at %+v, outside the %d-line input", k, p, lines)
			}
		}

		c, err := Parse("fuzz.toml", data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error: %v", err, err)
			}
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("error line %d outside the %d-line input: %v", e.Line, lines, err)
			}
			if c != nil {
				t.Fatal("Config and error both returned")
			}
			return
		}
		d := c.Dispatch
		if d.Concurrency < 0 || d.GlobalConcurrency < 0 || d.QueueTimeout < 0 || d.IdempotencyTTL < 0 {
			t.Fatalf("negative dispatcher settings: %+v", d)
		}
		if m := c.HostLimits().MemoryBytes; m != 0 && (m < MinMemory || m > MaxMemory) {
			t.Fatalf("memory limit %d out of range", m)
		}
		for _, name := range c.ToolNames() {
			if !abi.ValidToolName(name) {
				t.Fatalf("invalid tool name %q accepted", name)
			}
		}
	})
}

// TestDocExamples keeps the examples in docs/CONFIG.md valid.
func TestDocExamples(t *testing.T) {
	blocks := configDocExamples(t, "")
	if len(blocks) < 2 {
		t.Fatalf("found %d toml blocks in docs/CONFIG.md", len(blocks))
	}
	for i, b := range blocks {
		c, err := Parse("CONFIG.md", b[1])
		if err != nil {
			t.Errorf("example %d: %v", i+1, err)
			continue
		}
		if _, ok := c.Tools["db.write"]; !ok {
			t.Errorf("example %d does not configure db.write", i+1)
		}
	}
}

// configDocExamples returns the examples of docs/CONFIG.md fenced as
// "```toml TAG" (bare "```toml" when tag is empty), each as a match whose
// [1] is the example's text. Each section's examples carry their own tag,
// so that each test checks the ones it knows.
func configDocExamples(t *testing.T, tag string) [][][]byte {
	t.Helper()
	doc := configDoc(t)
	fence := "```toml"
	if tag != "" {
		fence += " " + tag
	}
	return regexp.MustCompile("(?s)"+regexp.QuoteMeta(fence)+"\n(.*?)```").FindAllSubmatch(doc, -1)
}

// configDoc is docs/CONFIG.md.
func configDoc(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../../docs/CONFIG.md")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no docs/CONFIG.md")
	}
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// wantLineError parses src and wants a *Error at line whose reason
// contains reason.
func wantLineError(t *testing.T, src string, line int, reason string) {
	t.Helper()
	_, err := Parse("toolhost.toml", []byte(src))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *config.Error", err)
	}
	if ce.Line != line || !strings.Contains(ce.Reason, reason) {
		t.Fatalf("got line %d %q\nwant line %d containing %q", ce.Line, ce.Reason, line, reason)
	}
}
