package config_test

import (
	"fmt"

	"github.com/toolhost/toolhost/internal/config"
)

func Example() {
	cfg, err := config.Parse("toolhost.toml", []byte(`
[dispatch]
concurrency = 4

[limits]
memory = "32MiB"

[tools."db.write"]          # more conservative than its manifest
timeout = "5s"
idempotent = false
concurrency = 1
  [tools."db.write".breaker]
  failures = 3
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	t := cfg.Tools["db.write"]
	fmt.Println("concurrency:", cfg.Dispatch.Concurrency, "db.write:", t.Concurrency, "failures:", t.Breaker.Failures)
	fmt.Println("memory:", cfg.HostLimits().MemoryBytes>>20, "MiB")
	fmt.Println("timeout:", t.Timeout, "idempotent:", *t.Idempotent)

	_, err = config.Parse("toolhost.toml", []byte("[limits]\nmemory = \"2MiB\"\n"))
	fmt.Println(err)
	_, err = config.Parse("toolhost.toml", []byte("[tools.\"db.write\"]\ntimeout = \"5s\"\nretries = 3\n"))
	fmt.Println(err)
	// Output:
	// concurrency: 4 db.write: 1 failures: 3
	// memory: 32 MiB
	// timeout: 5s idempotent: false
	// toolhost.toml:2: limits.memory: 2 MiB is below the 4 MiB minimum (a Go guest needs about 3.25 MiB to start)
	// toolhost.toml:3: tools."db.write".retries: unknown key "retries" in [tools."db.write"] (known keys: breaker, concurrency, description, expose, idempotent, log, max_timeout, memory, name, output, read_only, reuse, timeout)
}
