package config

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/toolhost/toolhost/abi"
	"github.com/toolhost/toolhost/breaker"
	"github.com/toolhost/toolhost/internal/hostconf"
)

// parse turns src into a Config, or the first (nearest the top) *Error.
//
// go-toml parses the syntax (see decode). The generic tree it yields is
// then checked against the schema below, rather than decoded into tagged
// structs, because struct decoding matches keys case-insensitively
// (Timeout = "1s" would pass, and with timeout beside it one of the two
// would win), reports type mismatches as plain errors in its own words, and
// stops at the first one.
func parse(name, src string) (*Config, error) {
	src = strings.TrimPrefix(src, "\ufeff") // a BOM is no part of the TOML
	tree, keys, err := decode([]byte(src))
	if err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, _ := de.Position()
			return nil, &Error{File: name, Line: max(line, 1), Reason: "invalid TOML: " + strings.TrimPrefix(de.Error(), "toml: "), Err: err}
		}
		return nil, &Error{File: name, Reason: strings.TrimPrefix(err.Error(), "toml: "), Err: err}
	}
	c := &Config{}
	p := &checker{keys: keys, file: name}
	p.document(tree, c)
	if len(p.errs) > 0 {
		// The first problem in the file; unlocated ones (there should be
		// none) last, ties in the order found.
		at := func(e problem) int {
			if e.pos.line == 0 {
				return math.MaxInt
			}
			return e.pos.off
		}
		first := slices.MinFunc(p.errs, func(a, b problem) int { return cmp.Compare(at(a), at(b)) })
		return nil, &Error{File: name, Line: first.pos.line, Reason: first.reason}
	}
	return c, nil
}

// A problem is one thing wrong with the file, at a key.
type problem struct {
	pos    keyPos
	reason string
}

// checker walks the parsed tree, filling a Config and collecting problems.
type checker struct {
	keys map[string]keyPos
	file string // for the secrets' messages
	errs []problem
}

func (p *checker) fail(path []string, format string, args ...any) {
	k := keyString(path)
	p.errs = append(p.errs, problem{pos: p.keys[k], reason: k + ": " + fmt.Sprintf(format, args...)})
}

// A field is one key of a table and how to check it.
type field struct {
	name  string
	check func(path []string, v any)
}

// fields checks table t at path against fs; other keys are unknown.
func (p *checker) fields(path []string, t map[string]any, fs ...field) {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	for _, k := range slices.Sorted(maps.Keys(t)) {
		kp := concat(path, []string{k})
		i := slices.Index(names, k)
		if i < 0 {
			p.unknown(kp, names)
			continue
		}
		fs[i].check(kp, t[k])
	}
}

func (p *checker) unknown(path []string, known []string) {
	key := path[len(path)-1]
	where := "at the top level"
	if len(path) > 1 {
		where = "in [" + keyString(path[:len(path)-1]) + "]"
	}
	known = slices.Sorted(slices.Values(known))
	if s := suggest(key, known); s != "" {
		p.fail(path, "unknown key %q %s; did you mean %q?", key, where, s)
		return
	}
	p.fail(path, "unknown key %q %s (known keys: %s)", key, where, strings.Join(known, ", "))
}

// suggest returns the known key key was probably meant to be: the same but
// for case or - for _, or at most two edits away.
func suggest(key string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), "-", "_") }
	best, bestD := "", 3
	for _, k := range known {
		if norm(k) == norm(key) {
			return k
		}
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return math.MaxInt
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// table returns v as a table, or nil after a problem.
func (p *checker) table(path []string, v any, hint string) map[string]any {
	if t, ok := v.(map[string]any); ok {
		return t
	}
	if _, ok := v.([]map[string]any); ok {
		p.fail(path, "must be a table (%s), not an array of tables ([[...]])", hint)
		return nil
	}
	p.fail(path, "must be a table (%s), not %s", hint, describe(v))
	return nil
}

func (p *checker) document(tree map[string]any, c *Config) {
	p.fields(nil, tree,
		field{"dispatch", func(path []string, v any) {
			if t := p.table(path, v, "[dispatch]"); t != nil {
				p.dispatch(path, t, &c.Dispatch)
			}
		}},
		field{"breaker", func(path []string, v any) {
			if t := p.table(path, v, "[breaker]"); t != nil {
				p.breaker(path, t, &c.Breaker)
			}
		}},
		field{"limits", func(path []string, v any) {
			if t := p.table(path, v, "[limits]"); t != nil {
				p.fields(path, t, p.limitFields(&c.Limits)...)
			}
		}},
		field{"tools", func(path []string, v any) {
			if t := p.table(path, v, `[tools."NAME"] sections`); t != nil {
				p.tools(path, t, c)
			}
		}},
		field{"governor", func(path []string, v any) { p.governorSection(path, v, c) }},
		field{"quotas", func(path []string, v any) { p.quotasSection(path, v, c) }},
		field{"grants", func(path []string, v any) { p.grantsSection(path, v, c) }},
		field{"modules", func(path []string, v any) { p.modulesSection(path, v, c) }},
		field{"access", func(path []string, v any) { p.accessSection(path, v, c) }},
		field{"auth", func(path []string, v any) { p.authSection(path, v, c) }},
		field{"redis", func(path []string, v any) { p.redisSection(path, v, c) }},
		field{"reuse", func(path []string, v any) { p.reuseSection(path, v, c) }},
		field{"runtime", func(path []string, v any) { p.runtimeSection(path, v, c) }},
		field{"http", func(path []string, v any) { p.httpSection(path, v, c) }},
		field{"trust", func(path []string, v any) { p.trustSection(path, v, c) }},
		field{"registries", func(path []string, v any) { p.registries(path, v, c) }},
		field{"input", func(path []string, v any) { p.inputSection(path, v, c) }},
	)
	p.uniqueViewNames(c)
}

func (p *checker) dispatch(path []string, t map[string]any, d *Dispatch) {
	p.fields(path, t,
		field{"concurrency", func(path []string, v any) { p.count(path, v, &d.Concurrency) }},
		field{"global_concurrency", func(path []string, v any) { p.count(path, v, &d.GlobalConcurrency) }},
		field{"queue_timeout", func(path []string, v any) { p.duration(path, v, &d.QueueTimeout) }},
		field{"idempotency_ttl", func(path []string, v any) { p.duration(path, v, &d.IdempotencyTTL) }},
		field{"max_retry_after", func(path []string, v any) { p.duration(path, v, &d.Retry.MaxRetryAfter) }},
		field{"task_offer_after", func(path []string, v any) { p.duration(path, v, &d.TaskOfferAfter) }},
	)
}

func (p *checker) breaker(path []string, t map[string]any, b *breaker.Settings) {
	p.fields(path, t,
		field{"failures", func(path []string, v any) { p.count(path, v, &b.Failures) }},
		field{"failure_rate", func(path []string, v any) { p.fraction(path, v, &b.FailureRate) }},
		field{"min_calls", func(path []string, v any) { p.count(path, v, &b.MinCalls) }},
		field{"window", func(path []string, v any) { p.duration(path, v, &b.Window) }},
		field{"cooldown", func(path []string, v any) { p.duration(path, v, &b.Cooldown) }},
		field{"jitter", func(path []string, v any) { p.ratioOrNone(path, v, &b.Jitter) }},
		field{"probes", func(path []string, v any) { p.count(path, v, &b.Probes) }},
	)
}

func (p *checker) limitFields(l *hostconf.Limits) []field {
	return []field{
		{"memory", func(path []string, v any) {
			if n, ok := p.size(path, v, MinMemory, MaxMemory,
				"below the 4 MiB minimum (a Go guest needs about 3.25 MiB to start)",
				"above the 4 GiB maximum (WebAssembly memory is 32-bit)"); ok {
				l.MemoryBytes = n
			}
		}},
		{"output", func(path []string, v any) {
			if n, ok := p.size(path, v, 1, math.MaxUint32, "", "4 GiB or more (the limit is a 32-bit count)"); ok {
				l.OutputBytes = uint32(n)
			}
		}},
		{"log", func(path []string, v any) {
			if n, ok := p.size(path, v, 1, math.MaxUint32, "", "4 GiB or more (the limit is a 32-bit count)"); ok {
				l.LogBytes = int(n)
			}
		}},
	}
}

func (p *checker) tools(path []string, t map[string]any, c *Config) {
	for _, name := range slices.Sorted(maps.Keys(t)) {
		tp := concat(path, []string{name})
		var tool Tool
		ok := true
		if !abi.ValidToolName(name) {
			p.fail(tp, "tool name %q does not match ^[A-Za-z0-9_.-]{1,128}$ (no manifest can declare it)", truncate(name))
			ok = false
		}
		tt, isTable := t[name].(map[string]any)
		if !isTable {
			p.fail(tp, "must be a table of settings for tool %q ([%s]), not %s; per-tool keys go under [tools.\"NAME\"]",
				truncate(name), keyString(tp), describe(t[name]))
			continue
		}
		fs := []field{
			{"timeout", func(path []string, v any) { p.duration(path, v, &tool.Timeout) }},
			{"max_timeout", func(path []string, v any) { p.duration(path, v, &tool.MaxTimeout) }},
			{"idempotent", func(path []string, v any) { p.flag(path, v, &tool.Idempotent) }},
			{"read_only", func(path []string, v any) { p.flag(path, v, &tool.ReadOnly) }},
			{"concurrency", func(path []string, v any) { p.count(path, v, &tool.Concurrency) }},
			{"reuse", func(path []string, v any) { p.flag(path, v, &tool.Reuse) }},
			{"breaker", func(path []string, v any) {
				if bt := p.table(path, v, "["+keyString(path)+"]"); bt != nil {
					p.breaker(path, bt, &tool.Breaker)
				}
			}},
		}
		fs = append(fs, p.limitFields(&tool.Limits)...)
		fs = append(fs, p.viewFields(&tool.View)...)
		p.fields(tp, tt, fs...)
		if ok {
			if c.Tools == nil {
				c.Tools = make(map[string]Tool)
			}
			c.Tools[name] = tool
		}
	}
}

// count checks an integer in [1, MaxCount].
func (p *checker) count(path []string, v any, dst *int) {
	if n, ok := p.whole(path, v, 1, "must be at least 1, not %d (leave the key out for the default)"); ok {
		*dst = n
	}
}

// whole checks an integer in [lo, MaxCount]; below names what is wrong
// with a smaller one (a format with one %d).
func (p *checker) whole(path []string, v any, lo int64, below string) (int, bool) {
	n, ok := v.(int64)
	switch {
	case !ok:
		p.fail(path, "must be a whole number, not %s", describe(v))
	case n < lo:
		p.fail(path, below, n)
	case n > MaxCount:
		p.fail(path, "must be at most %d, not %d", MaxCount, n)
	default:
		return int(n), true
	}
	return 0, false
}

// count64 is count for the governor's int64 counts.
func (p *checker) count64(path []string, v any, dst *int64) {
	var n int
	p.count(path, v, &n)
	if n > 0 {
		*dst = int64(n)
	}
}

// duration checks a Go duration string greater than zero.
func (p *checker) duration(path []string, v any, dst *time.Duration) {
	s, ok := v.(string)
	if !ok {
		p.fail(path, `must be a duration string such as "250ms", "5s" or "1m", not %s`, describe(v))
		return
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		p.fail(path, `%q is not a duration (write a number and a unit: "250ms", "5s", "1m", "1h30m")`, truncate(s))
	case d <= 0:
		p.fail(path, "must be greater than zero, not %q (leave the key out for the default)", s)
	default:
		*dst = d
	}
}

// ratio checks a number in [0, 1].
func (p *checker) ratio(path []string, v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int64:
		f = float64(n)
	default:
		p.fail(path, "must be a number between 0 and 1, not %s", describe(v))
		return 0, false
	}
	if !(f >= 0 && f <= 1) { // also NaN
		p.fail(path, "must be between 0 and 1, not %v", f)
		return 0, false
	}
	return f, true
}

// ratioOrNone checks a number in [0, 1] for a layer that reads 0 as "the
// default" and a negative value as "none" (a breaker's jitter, the
// governor's throttle reserve): 0 in the file is stored as -1.
func (p *checker) ratioOrNone(path []string, v any, dst *float64) {
	if f, ok := p.ratio(path, v); ok {
		*dst = f
		if f == 0 {
			*dst = -1
		}
	}
}

// fraction is ratio without 0: a threshold of 0 would mean "always".
func (p *checker) fraction(path []string, v any, dst *float64) {
	f, ok := p.ratio(path, v)
	switch {
	case !ok:
	case f == 0:
		p.fail(path, "must be greater than 0 (leave the key out for the default)")
	default:
		*dst = f
	}
}

func (p *checker) flag(path []string, v any, dst **bool) {
	b, ok := v.(bool)
	if !ok {
		p.fail(path, "must be true or false, not %s", describe(v))
		return
	}
	*dst = &b
}

// size checks a size in [lo, hi] bytes: an integer, or a string with a unit.
func (p *checker) size(path []string, v any, lo, hi uint64, below, above string) (uint64, bool) {
	var n uint64
	switch x := v.(type) {
	case int64:
		if x < 0 {
			p.fail(path, "must be a size, not %d", x)
			return 0, false
		}
		n = uint64(x)
	case string:
		var err error
		if n, err = parseSize(x); err != nil {
			p.fail(path, "%q is not a size: %v", truncate(x), err)
			return 0, false
		}
	default:
		p.fail(path, `must be a size (bytes, or a string such as "64MiB"), not %s`, describe(v))
		return 0, false
	}
	switch {
	case n == 0:
		p.fail(path, "must be greater than zero (leave the key out for the default)")
	case n < lo:
		p.fail(path, "%s is %s", formatSize(n), below)
	case n > hi:
		p.fail(path, "%s is %s", formatSize(n), above)
	default:
		return n, true
	}
	return 0, false
}

var units = []struct {
	name string
	mult uint64
}{
	{"B", 1},
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"kB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
}

// parseSize parses "64MiB", "64 MiB", "1000KB" or "4096" (bytes).
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && '0' <= t[i] && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errors.New(`want a whole number and a unit, such as "64MiB"`)
	}
	n, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, errors.New("the number is too large")
	}
	unit := strings.TrimLeft(t[i:], " ")
	if strings.HasPrefix(unit, ".") {
		return 0, errors.New(`want a whole number of units (write "1536KiB", not "1.5MiB")`)
	}
	if unit == "" {
		return n, nil
	}
	for _, u := range units {
		if u.name == unit {
			if n > math.MaxUint64/u.mult {
				return 0, errors.New("the number is too large")
			}
			return n * u.mult, nil
		}
	}
	return 0, fmt.Errorf("unknown unit %q (use B, KiB, MiB, GiB, KB, MB or GB)", truncate(unit))
}

// formatSize prints n bytes in the largest binary unit that divides it.
func formatSize(n uint64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatUint(n, 10) + " bytes"
}

// describe names a TOML value's type, with the value when it is short.
func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(x))
	case int64:
		return fmt.Sprintf("the integer %d", x)
	case float64:
		return fmt.Sprintf("the float %v", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case time.Time, toml.LocalDate, toml.LocalTime, toml.LocalDateTime:
		return "a date/time"
	case []any:
		return "an array"
	case []map[string]any:
		return "an array of tables"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("a %T", v)
}

// truncate shortens s for an error message.
func truncate(s string) string {
	const limit = 40
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
