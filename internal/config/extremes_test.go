package config

import "testing"

// A quota the governor would refuse at start-up is refused in the file,
// with its line.
func TestQuotaFasterThanANanosecond(t *testing.T) {
	_, err := Parse("x.toml", []byte("[quotas.\"q\"]\ncapacity = 1000000\ninterval = \"1ns\"\n"))
	want := `x.toml:3: quotas.q.interval: 1000000 tokens per 1ns is more than one per nanosecond; use a longer interval`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

// The keys this workstream added refuse bad values with the file's line
// and a reason.
func TestNewKeysErrors(t *testing.T) {
	for src, want := range map[string]string{
		"[breaker]\nfailure_rate = 0\n":          `x.toml:2: breaker.failure_rate: must be greater than 0 (leave the key out for the default)`,
		"[breaker]\nfailure_rate = 1.5\n":        `x.toml:2: breaker.failure_rate: must be between 0 and 1, not 1.5`,
		"[tools.\"t\".breaker]\nmin_calls = 0\n": `x.toml:2: tools.t.breaker.min_calls: must be at least 1, not 0 (leave the key out for the default)`,
		"[tools.\"t\"]\nmax_timeout = \"0s\"\n":  `x.toml:2: tools.t.max_timeout: must be greater than zero, not "0s" (leave the key out for the default)`,
		"[governor]\nmax_report_block = 5\n":     `x.toml:2: governor.max_report_block: must be a duration string such as "250ms", "5s" or "1m", not the integer 5`,
		"[governor]\nmax_agents = 0\n":           `x.toml:2: governor.max_agents: must be at least 1, not 0 (leave the key out for the default)`,
		"[governor]\nmax_agents = 1001\n":        `x.toml:2: governor.max_agents: must be at most 1000, not 1001 (each quota reads every named agent's usage at each status)`,
		"[breaker]\nfailure_rat = 0.5\n":         `x.toml:2: breaker.failure_rat: unknown key "failure_rat" in [breaker]; did you mean "failure_rate"?`,
	} {
		if _, err := Parse("x.toml", []byte(src)); err == nil || err.Error() != want {
			t.Errorf("%q:\ngot  %v\nwant %s", src, err, want)
		}
	}
}
