package server

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/governor"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/config"
)

// maxDuration is the longest duration a file can write.
const maxDuration = "2562047h47m16.854775807s"

// An extreme is one key set to one extreme of its range, and how to see
// the value in the layer the key configures.
type extreme struct {
	section string // the table the key is in, as written in the file
	key     string
	values  []string                             // TOML values: the lowest and highest accepted
	extra   string                               // other lines the section needs for the value to be valid
	got     func(*testing.T, *config.Config) any // the value as the layer runs with it
	want    func(v string) any                   // what that should be for each value
}

// Every config key's extreme values reach its layer unchanged, through
// package config and the server's wiring: a layer that reads a zero or an
// extreme as "the default" (throttle_reserve = 0 was silently 0.5) fails
// here. TestExtremesCoverEveryKey keeps the table complete.
func TestExtremesReachTheirLayer(t *testing.T) {
	for _, x := range extremes() {
		for _, v := range x.values {
			t.Run(x.section+"."+x.key+"="+shorten(v), func(t *testing.T) {
				src := fmt.Sprintf("[%s]\n%s = %s\n%s", x.section, x.key, v, x.extra)
				c, err := config.Parse("x.toml", []byte(src))
				if err != nil {
					t.Fatalf("%s\nrefused: %v", src, err)
				}
				if got, want := x.got(t, c), x.want(v); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s\nthe layer runs with %v, want %v", src, got, want)
				}
			})
		}
	}
}

// Every key the parser knows, in every section, has a row above.
func TestExtremesCoverEveryKey(t *testing.T) {
	have := map[string]bool{}
	for _, x := range extremes() {
		have[x.section+"."+x.key] = true
	}
	known := regexp.MustCompile(`known keys: ([a-z_, ]+)\)`)
	valid := map[string]string{`quotas."q"`: "capacity = 1\ninterval = \"1s\"\n", `grants."m.wasm"`: "hosts = [\"a.b\"]\n"}
	for _, section := range []string{`dispatch`, `breaker`, `limits`, `tools."t"`, `tools."t".breaker`, `governor`,
		`quotas."q"`, `grants."m.wasm"`, `reuse`, `runtime`, `http`} {
		_, err := config.Parse("x.toml", []byte("["+section+"]\n"+valid[section]+"zzzzzzzz = 1\n"))
		m := known.FindStringSubmatch(fmt.Sprint(err))
		if m == nil {
			t.Fatalf("[%s]: no list of known keys in %v", section, err)
		}
		for _, k := range strings.Split(m[1], ", ") {
			if k == "breaker" && section == `tools."t"` {
				continue // a table, covered as tools."t".breaker
			}
			if !have[section+"."+k] {
				t.Errorf("[%s] %s has no row in extremes()", section, k)
			}
		}
	}
}

func extremes() []extreme {
	dur := func(v string) any { d, _ := time.ParseDuration(strings.Trim(v, `"`)); return d }
	num := func(v string) any { var f float64; fmt.Sscan(v, &f); return f }
	count := []string{"1", "1000000"}
	durs := []string{`"1ns"`, `"` + maxDuration + `"`}
	dispatch := func(t *testing.T, c *config.Config) dispatcher.Config {
		return dispatcherConfig(c)
	}
	brk := func(t *testing.T, c *config.Config) breaker.Settings {
		return breaker.New(dispatch(t, c).Breaker, breaker.Options{}).Settings()
	}
	toolBrk := func(t *testing.T, c *config.Config) breaker.Settings {
		d := dispatch(t, c)
		per := map[string]breaker.Settings{"t": d.Tools["t"].Breaker}
		return breaker.NewSet(d.Breaker, per, breaker.SetOptions{}).For("t").Settings()
	}
	gov := func(t *testing.T, c *config.Config) governor.Config {
		g, err := governor.New(c.GovernorConfig())
		if err != nil {
			t.Fatalf("the governor refused what the config accepted: %v", err)
		}
		g.Close()
		return g.Config()
	}
	quota := func(t *testing.T, c *config.Config) governor.Quota { return gov(t, c).Quotas[0] }
	grant := func(c *config.Config) config.Grant { return c.Grants["m.wasm"] }
	var xs []extreme
	add := func(x extreme) { xs = append(xs, x) }

	for _, k := range []struct {
		key string
		got func(dispatcher.Config) any
	}{
		{"concurrency", func(d dispatcher.Config) any { return d.Concurrency }},
		{"global_concurrency", func(d dispatcher.Config) any { return d.GlobalConcurrency }},
	} {
		add(extreme{section: "dispatch", key: k.key, values: count, want: num2int,
			got: func(t *testing.T, c *config.Config) any { return k.got(dispatch(t, c)) }})
	}
	add(extreme{section: "dispatch", key: "queue_timeout", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return dispatch(t, c).QueueTimeout }})
	add(extreme{section: "dispatch", key: "idempotency_ttl", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return dispatch(t, c).IdempotencyTTL }})
	add(extreme{section: "dispatch", key: "max_retry_after", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return dispatch(t, c).Retry.MaxRetryAfter }})
	add(extreme{section: "dispatch", key: "task_offer_after", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return c.TaskOfferAfter() }})

	for _, b := range []struct {
		section  string
		settings func(*testing.T, *config.Config) breaker.Settings
		extra    string
	}{{"breaker", brk, ""}, {`tools."t".breaker`, toolBrk, ""}} {
		s := b.settings
		add(extreme{section: b.section, key: "failures", values: count, want: num2int,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).Failures }})
		add(extreme{section: b.section, key: "min_calls", values: count, want: num2int,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).MinCalls }})
		add(extreme{section: b.section, key: "probes", values: count, want: num2int,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).Probes }})
		add(extreme{section: b.section, key: "failure_rate", values: []string{"1e-9", "1.0"}, want: num,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).FailureRate }})
		add(extreme{section: b.section, key: "window", values: durs, want: dur,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).Window }})
		add(extreme{section: b.section, key: "cooldown", values: durs, want: dur,
			got: func(t *testing.T, c *config.Config) any { return s(t, c).Cooldown }})
		// jitter = 0 is "no jitter", which the breaker spells -1.
		add(extreme{section: b.section, key: "jitter", values: []string{"0", "1.0"},
			want: func(v string) any {
				if f := num(v).(float64); f > 0 {
					return f
				}
				return -1.0
			},
			got: func(t *testing.T, c *config.Config) any { return s(t, c).Jitter }})
	}

	for _, section := range []string{"limits", `tools."t"`} {
		get := func(c *config.Config) (mem uint64, out uint32, log int) {
			if section == "limits" {
				h := c.HostLimits()
				return h.MemoryBytes, h.OutputBytes, h.LogBytes
			}
			h := toolOverrides(c)["t"].Limits
			return h.MemoryBytes, h.OutputBytes, h.LogBytes
		}
		add(extreme{section: section, key: "memory", values: []string{`"4MiB"`, `"4GiB"`}, want: size,
			got: func(t *testing.T, c *config.Config) any { m, _, _ := get(c); return m }})
		add(extreme{section: section, key: "output", values: []string{"1", fmt.Sprint(uint64(math.MaxUint32))}, want: size,
			got: func(t *testing.T, c *config.Config) any { _, o, _ := get(c); return uint64(o) }})
		add(extreme{section: section, key: "log", values: []string{"1", fmt.Sprint(uint64(math.MaxUint32))}, want: size,
			got: func(t *testing.T, c *config.Config) any { _, _, l := get(c); return uint64(l) }})
	}
	add(extreme{section: `tools."t"`, key: "timeout", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return toolOverrides(c)["t"].Timeout }})
	add(extreme{section: `tools."t"`, key: "max_timeout", values: durs, want: dur,
		got: func(t *testing.T, c *config.Config) any { return dispatch(t, c).Tools["t"].MaxTimeout }})
	add(extreme{section: `tools."t"`, key: "concurrency", values: count, want: num2int,
		got: func(t *testing.T, c *config.Config) any { return dispatch(t, c).Tools["t"].Concurrency }})
	add(extreme{section: `tools."t"`, key: "expose", values: []string{"false", "true"}, want: func(v string) any { return v == "true" },
		got: func(t *testing.T, c *config.Config) any { return *toolOverrides(c)["t"].Expose }})
	add(extreme{section: `tools."t"`, key: "name", values: []string{`"a"`, `"` + strings.Repeat("z", 64) + `"`}, want: unquote,
		got: func(t *testing.T, c *config.Config) any { return toolOverrides(c)["t"].WireName }})
	add(extreme{section: `tools."t"`, key: "description", values: []string{`"x"`, `"` + strings.Repeat("d", 1<<16) + `"`}, want: unquote,
		got: func(t *testing.T, c *config.Config) any { return toolOverrides(c)["t"].Description }})
	add(extreme{section: `tools."t"`, key: "reuse", values: []string{"false", "true"}, want: func(v string) any { return v == "true" },
		got: func(t *testing.T, c *config.Config) any { return *toolOverrides(c)["t"].Reuse }})
	add(extreme{section: `modules."m.wasm"`, key: "reuse", values: []string{"false", "true"}, want: func(v string) any { return v == "true" },
		got: func(t *testing.T, c *config.Config) any { return c.ModuleReuse()["m.wasm"] }})
	for _, k := range []struct {
		key    string
		values []string
		want   func(string) any
		got    func(host.Reuse) any
	}{
		{"max_per_tool", count, num2int, func(r host.Reuse) any { return r.MaxPerTool }},
		{"max_total", count, num2int, func(r host.Reuse) any { return r.MaxTotal }},
		{"max_uses", count, num2int, func(r host.Reuse) any { return r.MaxUses }},
		{"idle_timeout", durs, dur, func(r host.Reuse) any { return r.IdleTimeout }},
		{"memory_high_water", []string{"65536", `"4GiB"`}, size, func(r host.Reuse) any { return r.MemoryHighWater }},
	} {
		add(extreme{section: "reuse", key: k.key, values: k.values, want: k.want,
			got: func(t *testing.T, c *config.Config) any { return k.got(c.HostReuse()) }})
	}
	for _, k := range []string{"idempotent", "read_only"} {
		add(extreme{section: `tools."t"`, key: k, values: []string{"false", "true"}, want: func(v string) any { return v == "true" },
			got: func(t *testing.T, c *config.Config) any {
				o := toolOverrides(c)["t"]
				if k == "idempotent" {
					return *o.Idempotent
				}
				return *o.ReadOnly
			}})
	}

	for _, k := range []struct {
		key string
		got func(governor.Config) any
	}{
		{"window", func(g governor.Config) any { return g.Window }},
		{"aging", func(g governor.Config) any { return g.Aging }},
		{"broadcast", func(g governor.Config) any { return g.Broadcast }},
		{"max_wait", func(g governor.Config) any { return g.MaxWait }},
		{"default_block", func(g governor.Config) any { return g.DefaultBlock }},
		{"max_block", func(g governor.Config) any { return g.MaxBlock }},
		{"max_report_block", func(g governor.Config) any { return g.MaxReportBlock }},
	} {
		add(extreme{section: "governor", key: k.key, values: durs, want: dur,
			got: func(t *testing.T, c *config.Config) any { return k.got(gov(t, c)) }})
	}
	add(extreme{section: "governor", key: "throttle_enter", values: []string{"2e-9", "1.0"}, extra: "throttle_exit = 1e-9\n", want: num,
		got: func(t *testing.T, c *config.Config) any { return gov(t, c).ThrottleEnter }})
	add(extreme{section: "governor", key: "throttle_exit", values: []string{"1e-9", "0.999999"}, extra: "throttle_enter = 1.0\n", want: num,
		got: func(t *testing.T, c *config.Config) any { return gov(t, c).ThrottleExit }})
	add(extreme{section: "governor", key: "max_agents", values: []string{"1", "1000"}, want: num2int,
		got: func(t *testing.T, c *config.Config) any { return gov(t, c).MaxAgents }})
	add(extreme{section: "governor", key: "throttle_reserve", values: []string{"0", "1.0"}, want: num,
		got: func(t *testing.T, c *config.Config) any { return gov(t, c).ThrottleReserve }})
	add(extreme{section: "governor", key: "priorities", values: []string{`{ "t" = "background" }`, `{ "t" = "critical" }`},
		want: func(v string) any {
			p, _ := governor.ParsePriority(strings.Trim(v[strings.Index(v, "= ")+2:], `" }`))
			return p
		},
		got: func(t *testing.T, c *config.Config) any { return gov(t, c).Priorities["t"] }})

	add(extreme{section: `quotas."q"`, key: "capacity", values: count, extra: `interval = "1h"` + "\n", want: num2int64,
		got: func(t *testing.T, c *config.Config) any { return quota(t, c).Capacity }})
	add(extreme{section: `quotas."q"`, key: "interval", values: []string{`"1ns"`, `"` + maxDuration + `"`}, extra: "capacity = 1\n", want: dur,
		got: func(t *testing.T, c *config.Config) any { return quota(t, c).Interval }})
	add(extreme{section: `quotas."q"`, key: "burst", values: count, extra: "capacity = 1000000\ninterval = \"1h\"\n", want: num2int64,
		got: func(t *testing.T, c *config.Config) any { return quota(t, c).Burst }})
	add(extreme{section: `quotas."q"`, key: "tools", values: []string{`{ "t" = 1 }`, `{ "t" = 1000000 }`},
		extra: "capacity = 1000000\nburst = 1000000\ninterval = \"1h\"\n",
		want: func(v string) any {
			var n int64
			fmt.Sscan(strings.Trim(v[strings.Index(v, "= ")+2:], " }"), &n)
			return n
		},
		got: func(t *testing.T, c *config.Config) any { return quota(t, c).Tools["t"] }})
	add(extreme{section: `quotas."q"`, key: "hosts", values: []string{`["a.b"]`, `["*.example.com:65535", "[::1]:1"]`},
		extra: "capacity = 1\ninterval = \"1s\"\n", want: list,
		got: func(t *testing.T, c *config.Config) any { return quota(t, c).Hosts }})

	g := func(extra string) string { return `hosts = ["a.b"]` + "\n" + extra }
	add(extreme{section: `grants."m.wasm"`, key: "hosts", values: []string{`["a.b"]`, `["*.example.com:65535", "[::1]:1"]`}, want: list,
		got: func(t *testing.T, c *config.Config) any { return grant(c).Hosts }})
	add(extreme{section: `grants."m.wasm"`, key: "methods", values: []string{`["GET"]`, `["PATCH", "DELETE"]`}, extra: g(""), want: list,
		got: func(t *testing.T, c *config.Config) any { return c.EgressGrants()["m.wasm"].Methods }})
	add(extreme{section: `grants."m.wasm"`, key: "schemes", values: []string{`["http"]`, `["http", "https"]`}, extra: g(""), want: list,
		got: func(t *testing.T, c *config.Config) any { return c.EgressGrants()["m.wasm"].Schemes }})
	add(extreme{section: `grants."m.wasm"`, key: "max_request_bytes", values: []string{"1", `"1GiB"`}, extra: g(""), want: size,
		got: func(t *testing.T, c *config.Config) any { return uint64(c.EgressGrants()["m.wasm"].MaxRequestBytes) }})
	add(extreme{section: `grants."m.wasm"`, key: "max_response_bytes", values: []string{"1", `"1GiB"`}, extra: g(""), want: size,
		got: func(t *testing.T, c *config.Config) any { return uint64(c.EgressGrants()["m.wasm"].MaxResponseBytes) }})
	add(extreme{section: `grants."m.wasm"`, key: "allow_networks", values: []string{`["0.0.0.0/0"]`, `["::1/128"]`}, extra: g(""),
		want: func(v string) any { return []netip.Prefix{netip.MustParsePrefix(list(v).([]string)[0])} },
		got:  func(t *testing.T, c *config.Config) any { return c.EgressGrants()["m.wasm"].AllowNetworks }})
	add(extreme{section: `grants."m.wasm"`, key: "headers", values: []string{`{ "a.b:443" = { X = "" } }`}, extra: g(""),
		want: func(string) any { return map[string]map[string]string{"a.b:443": {"X": ""}} },
		got:  func(t *testing.T, c *config.Config) any { return c.EgressGrants()["m.wasm"].Headers }})
	// [runtime] reaches the host through serve's flags, which it fills
	// where the command line said nothing.
	yes := func(v string) any { return v == "true" }
	add(extreme{section: "runtime", key: "lazy", values: []string{"false", "true"}, want: yes,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).Lazy }})
	add(extreme{section: "runtime", key: "warm_up", values: []string{"false", "true"}, want: yes,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).WarmUp }})
	add(extreme{section: "runtime", key: "interpret", values: []string{"false", "true"}, want: yes,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).Interpret }})
	add(extreme{section: "runtime", key: "max_resident", values: []string{"0", "1000000"}, want: num2int,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).MaxResident }})
	add(extreme{section: "runtime", key: "max_fresh", values: []string{"0", "1000000"}, want: num2int,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).MaxFresh }})
	// [http] reaches the listener through serve's flags, likewise.
	add(extreme{section: "http", key: "max_conns_per_peer", values: []string{"0", "1000000"}, want: num2int,
		got: func(t *testing.T, c *config.Config) any { return served(t, c).MaxConnsPerPeer }})
	return xs
}

func unquote(v string) any { return strings.Trim(v, `"`) }

func num2int(v string) any   { var n int; fmt.Sscan(v, &n); return n }
func num2int64(v string) any { var n int64; fmt.Sscan(v, &n); return n }

// size reads the sizes the table writes: bytes, or a number of MiB or GiB.
func size(v string) any {
	v = strings.Trim(v, `"`)
	mult := uint64(1)
	for unit, m := range map[string]uint64{"MiB": 1 << 20, "GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(v, unit); ok {
			v, mult = n, m
		}
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		panic(err)
	}
	return n * mult
}

func list(v string) any {
	var out []string
	for _, s := range strings.Split(strings.Trim(v, "[]"), ",") {
		out = append(out, strings.Trim(strings.TrimSpace(s), `"`))
	}
	return slices.Clip(out)
}

// shorten keeps a subtest's name short.
func shorten(v string) string {
	if len(v) > 40 {
		return v[:40] + "…"
	}
	return v
}
