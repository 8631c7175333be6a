package config

import (
	"cmp"
	"context"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/imports/toolhostv1"
	"github.com/toolhost/toolhost/internal/hostconf"
)

const governorFile = `[governor]
window = "10s"
throttle_enter = 0.8
throttle_exit = 0.5
throttle_reserve = 0.25
aging = "2s"
broadcast = "5s"
max_wait = "20s"
default_block = "2s"
max_block = "1m"
max_agents = 8
  [governor.priorities]
  "gh.search" = "interactive"
  "gh.crawl" = "background"

[quotas.github]
capacity = 600
interval = "1m"
burst = 20
hosts = ["api.github.com", "*.githubusercontent.com"]
tools = { "gh.search" = 1, "gh.bulk" = 5 }

[quotas."upstream.local"]
capacity = 10
interval = "1s"

[grants."fetch.wasm"]
hosts = ["api.github.com", "*.githubusercontent.com", "127.0.0.1:8080"]
methods = ["GET", "post"]
schemes = ["https", "http"]
max_request_bytes = "64KiB"
max_response_bytes = "2MiB"
allow_networks = ["127.0.0.0/8", "::1"]
  [grants."fetch.wasm".headers."api.github.com"]
  Authorization = "Bearer ghp_example"
  X-GitHub-Api-Version = "2022-11-28"
`

func TestParseGovernor(t *testing.T) {
	c, err := Parse("toolhost.toml", []byte(governorFile))
	if err != nil {
		t.Fatal(err)
	}
	gc := c.GovernorConfig()
	want := governor.Config{Window: 10 * time.Second, ThrottleEnter: 0.8, ThrottleExit: 0.5, ThrottleReserve: 0.25,
		Aging: 2 * time.Second, Broadcast: 5 * time.Second, MaxWait: 20 * time.Second, DefaultBlock: 2 * time.Second, MaxBlock: time.Minute, MaxAgents: 8,
		Priorities: map[string]governor.Priority{"gh.search": governor.Interactive, "gh.crawl": governor.Background},
		Quotas: []governor.Quota{
			{Name: "github", Capacity: 600, Interval: time.Minute, Burst: 20, Hosts: []string{"api.github.com", "*.githubusercontent.com"},
				Tools: map[string]int64{"gh.search": 1, "gh.bulk": 5}},
			{Name: "upstream.local", Capacity: 10, Interval: time.Second},
		}}
	if !reflect.DeepEqual(gc, want) {
		t.Fatalf("GovernorConfig:\n got %+v\nwant %+v", gc, want)
	}
	g, err := governor.New(gc)
	if err != nil {
		t.Fatalf("governor.New refuses the parsed config: %v", err)
	}
	g.Close()

	grants := c.EgressGrants()
	wantGrant := hostconf.Grant{Hosts: []string{"api.github.com", "*.githubusercontent.com", "127.0.0.1:8080"},
		Methods: []string{"GET", "POST"}, Schemes: []string{"https", "http"}, MaxRequestBytes: 64 << 10, MaxResponseBytes: 2 << 20,
		AllowNetworks: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Headers:       map[string]map[string]string{"api.github.com": {"Authorization": "Bearer ghp_example", "X-GitHub-Api-Version": "2022-11-28"}}}
	if !reflect.DeepEqual(grants, map[string]hostconf.Grant{"fetch.wasm": wantGrant}) {
		t.Fatalf("EgressGrants:\n got %+v\nwant %+v", grants["fetch.wasm"], wantGrant)
	}
	rt, err := host.New(context.Background(), host.Config{CacheDir: "off", Egress: toolhostv1.Egress{Grants: grants}})
	if err != nil {
		t.Fatalf("host.New refuses the parsed grants: %v", err)
	}
	_ = rt.Close(context.Background())
}

func TestParseGovernorEmpty(t *testing.T) {
	c, err := Parse("t.toml", []byte("[dispatch]\nconcurrency = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.GovernorConfig(); !reflect.DeepEqual(got, governor.Config{}) {
		t.Fatalf("an empty file changed the governor config: %+v", got)
	}
	if c.EgressGrants() != nil {
		t.Fatal("an empty file granted egress")
	}
	var nilc *Config
	if nilc.EgressGrants() != nil || !reflect.DeepEqual(nilc.GovernorConfig(), governor.Config{}) {
		t.Fatal("a nil Config is not neutral")
	}
}

func TestParseGovernorErrors(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		line   int
		reason string
	}{
		{"unknown governor key", "[governor]\nwindow = \"10s\"\nwindos = 1\n", 3, `governor.windos: unknown key "windos" in [governor]; did you mean "window"?`},
		{"thresholds", "[governor]\nthrottle_enter = 0.5\n\nthrottle_exit = 0.7\n", 4, "governor.throttle_exit: throttle_exit (0.7) must be below throttle_enter (0.5)"},
		{"enter below default exit", "[governor]\nthrottle_enter = 0.5\n", 2, "governor.throttle_enter: throttle_exit (0.6) must be below throttle_enter (0.5)"},
		{"zero threshold", "[governor]\nthrottle_exit = 0\n", 2, "governor.throttle_exit: must be greater than 0"},
		{"bad priority", "[governor.priorities]\n\"a.b\" = \"urgent\"\n", 2, `governor.priorities."a.b": "urgent" is not a priority class`},
		{"priority bad tool", "[governor.priorities]\n\"a b\" = \"normal\"\n", 2, `tool name "a b" does not match`},
		{"quota without interval", "[quotas.gh]\ncapacity = 10\n", 1, `quotas.gh: needs interval`},
		{"quota without capacity", "\n[quotas.gh]\ninterval = \"1s\"\n", 2, `quotas.gh: needs capacity`},
		// Second of two quotas: the line is its own, not the first's.
		{"second quota key", "[quotas.a]\ncapacity = 1\ninterval = \"1s\"\n\n[quotas.b]\ncapacity = 1\ninterval = \"1s\"\nburts = 3\n", 8, `quotas.b.burts: unknown key "burts" in [quotas.b]; did you mean "burst"?`},
		{"burst over capacity", "[quotas.a]\ncapacity = 5\ninterval = \"1s\"\nburst = 6\n", 4, "quotas.a.burst: burst 6 is more than the capacity 5"},
		{"tool cost over burst", "[quotas.a]\ncapacity = 60\ninterval = \"1m\"\ntools = { \"t.x\" = 2 }\n", 4, `quotas.a.tools."t.x": a call draws 2 tokens, more than the burst (1)`},
		{"bad host", "[quotas.a]\ncapacity = 5\ninterval = \"1s\"\nhosts = [\"https://x.com\"]\n", 4, "quotas.a.hosts: host pattern \"https://x.com\" must be a host name"},
		{"hosts not strings", "[quotas.a]\ncapacity = 5\ninterval = \"1s\"\nhosts = [1]\n", 4, "quotas.a.hosts: must be an array of strings; it holds the integer 1"},
		{"grant not a module", "[grants.fetch]\nhosts = [\"x.com\"]\n", 1, `grants.fetch: "fetch" is not a module file name`},
		{"grant without hosts", "[grants.\"f.wasm\"]\nmethods = [\"GET\"]\n", 1, `grants."f.wasm": grants no hosts`},
		{"grant bad scheme", "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\nschemes = [\"ftp\"]\n", 3, `grants."f.wasm".schemes: "ftp" is not a scheme`},
		{"grant bad network", "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\nallow_networks = [\"10.0.0.0/33\"]\n", 3, `grants."f.wasm".allow_networks: "10.0.0.0/33" is not an IP address or CIDR prefix`},
		{"grant size", "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\nmax_response_bytes = \"2GiB\"\n", 3, `grants."f.wasm".max_response_bytes: 2 GiB is over 1 GiB`},
		{"header value", "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\n[grants.\"f.wasm\".headers.\"x.com\"]\nAuthorization = 5\n", 4, `grants."f.wasm".headers."x.com".Authorization: must be a string or a reference {env = "NAME"} or {file = "/run/secrets/NAME"}, not the integer 5`},
		{"unknown grant key", "[grants.\"f.wasm\"]\nhosts = [\"x.com\"]\nhost = \"y\"\n", 3, `did you mean "hosts"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantLineError(t, tt.src, tt.line, tt.reason)
		})
	}
}

// TestGovernorDocExamples keeps the examples of the governor and egress
// sections of docs/CONFIG.md valid. They are fenced as "toml governor" so
// that TestDocExamples, which wants db.write in every example, skips them.
func TestGovernorDocExamples(t *testing.T) {
	blocks := configDocExamples(t, "governor")
	if len(blocks) == 0 {
		t.Fatal("no governor examples in docs/CONFIG.md")
	}
	for i, b := range blocks {
		c, err := Parse("CONFIG.md", b[1])
		if err != nil {
			t.Errorf("governor example %d: %v", i+1, err)
			continue
		}
		gc := c.GovernorConfig()
		gc.Broadcast = cmp.Or(gc.Broadcast, -1)
		g, err := governor.New(gc)
		if err != nil {
			t.Errorf("governor example %d: %v", i+1, err)
			continue
		}
		g.Close()
		rt, err := host.New(context.Background(), host.Config{CacheDir: "off", Egress: toolhostv1.Egress{Grants: c.EgressGrants()}})
		if err != nil {
			t.Errorf("governor example %d: %v", i+1, err)
			continue
		}
		_ = rt.Close(context.Background())
	}
}
