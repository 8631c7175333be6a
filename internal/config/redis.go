package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Redis is the [redis] section: the Redis that replicas share idempotency
// keys and quotas through (docs/SCALING.md). Zero fields were not set. It
// is config-side because its keys go to several parts that are no leaves
// (the Redis connection, the shared idempotency and governor stores) and
// to a choice package server makes (Idempotency).
type Redis struct {
	// URL (url) is redis://[user:password@]host:port/db; "" means no Redis
	// (serve --redis sets it too, and wins).
	URL string
	// Idempotency (idempotency) is what keyed calls do while Redis is
	// unreachable: IdempotencyFailClosed (the default) or
	// IdempotencyLocalFallback.
	Idempotency string
	// Replicas (replicas) is how many replicas share the quotas: while
	// Redis is unreachable each grants 1/Replicas of every quota.
	Replicas int
	// Timeout (timeout) bounds every Redis command.
	Timeout time.Duration
	// Lease (lease) is how long an idempotency claim outlives its owner's
	// last renewal.
	Lease time.Duration
}

// The values of [redis] idempotency.
const (
	// IdempotencyFailClosed: keyed calls fail with transient while Redis
	// is unreachable, and never run without deduplication.
	IdempotencyFailClosed = "fail-closed"
	// IdempotencyLocalFallback: keyed calls are deduplicated within the
	// replica while Redis is unreachable (a key may run once per replica).
	IdempotencyLocalFallback = "local-fallback"
)

func (p *checker) redisSection(path []string, v any, c *Config) {
	t := p.table(path, v, "[redis]")
	if t == nil {
		return
	}
	r := &c.Redis
	p.fields(path, t,
		field{"url", func(path []string, v any) {
			s, ok := v.(string)
			if !ok {
				p.fail(path, `must be a string such as "redis://127.0.0.1:6379/0", not %s`, describe(v))
				return
			}
			if err := CheckRedisURL(s); err != "" {
				p.fail(path, "%s", err)
				return
			}
			r.URL = s
		}},
		field{"idempotency", func(path []string, v any) {
			s, ok := v.(string)
			if !ok || (s != IdempotencyFailClosed && s != IdempotencyLocalFallback) {
				p.fail(path, `must be %q (keyed calls fail with transient while Redis is unreachable; the default) or %q (they are deduplicated within the replica meanwhile), not %s`,
					IdempotencyFailClosed, IdempotencyLocalFallback, describe(v))
				return
			}
			r.Idempotency = s
		}},
		field{"replicas", func(path []string, v any) { p.count(path, v, &r.Replicas) }},
		field{"timeout", func(path []string, v any) { p.duration(path, v, &r.Timeout) }},
		field{"lease", func(path []string, v any) { p.duration(path, v, &r.Lease) }},
	)
}

// CheckRedisURL says what is wrong with a Redis URL, or "" when it is
// usable: redis:// or rediss://, a host, an optional port and an optional
// database number.
func CheckRedisURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		return `"` + truncate(s) + `" is not a Redis URL (write redis://host:port/db, for example "redis://127.0.0.1:6379/0")`
	}
	if u.Hostname() == "" {
		return `"` + truncate(s) + `" names no host (write redis://host:port/db)`
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return `"` + truncate(s) + `": port ` + p + ` is not a port number`
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		if n, err := strconv.Atoi(db); err != nil || n < 0 {
			return `"` + truncate(s) + `": database "` + db + `" is not a number (write redis://host:port/0)`
		}
	}
	return ""
}
