package config

import (
	"testing"
	"time"
)

func TestParseRedis(t *testing.T) {
	c, err := Parse("t.toml", []byte("[redis]\nurl = \"redis://10.0.0.5:6379/2\"\nidempotency = \"local-fallback\"\nreplicas = 3\ntimeout = \"250ms\"\nlease = \"10s\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Redis{URL: "redis://10.0.0.5:6379/2", Idempotency: IdempotencyLocalFallback, Replicas: 3, Timeout: 250 * time.Millisecond, Lease: 10 * time.Second}
	if c.Redis != want {
		t.Fatalf("got %+v, want %+v", c.Redis, want)
	}
}

func TestParseRedisErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line      int
		reason    string
	}{
		{"scheme", "[redis]\nurl = \"http://x:6379\"\n", 2, `redis.url: "http://x:6379" is not a Redis URL (write redis://host:port/db`},
		{"no host", "[redis]\nurl = \"redis:///0\"\n", 2, `redis.url: "redis:///0" names no host`},
		{"database", "[redis]\nurl = \"redis://x:6379/zero\"\n", 2, `redis.url: "redis://x:6379/zero": database "zero" is not a number`},
		{"port", "[redis]\nurl = \"redis://x:99999/0\"\n", 2, `port 99999 is not a port number`},
		{"url type", "[redis]\nurl = 6379\n", 2, `redis.url: must be a string such as "redis://127.0.0.1:6379/0", not the integer 6379`},
		{"mode", "[redis]\nidempotency = \"best-effort\"\n", 2, `redis.idempotency: must be "fail-closed" (keyed calls fail with transient while Redis is unreachable; the default) or "local-fallback"`},
		{"replicas", "[redis]\nreplicas = 0\n", 2, "redis.replicas: must be at least 1"},
		{"timeout", "[redis]\ntimeout = 5\n", 2, "redis.timeout: must be a duration string"},
		{"unknown", "[redis]\nreplica = 2\n", 2, `redis.replica: unknown key "replica" in [redis]; did you mean "replicas"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantLineError(t, tt.src, tt.line, tt.reason)
		})
	}
}

// TestRedisDocExample keeps the [redis] example of docs/CONFIG.md valid.
func TestRedisDocExample(t *testing.T) {
	blocks := configDocExamples(t, "redis")
	if len(blocks) != 1 {
		t.Fatalf("%d [redis] examples in docs/CONFIG.md, want 1", len(blocks))
	}
	c, err := Parse("CONFIG.md", blocks[0][1])
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.URL == "" || c.Redis.Replicas != 3 {
		t.Fatalf("parsed %+v", c.Redis)
	}
}
