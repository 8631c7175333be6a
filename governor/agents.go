package governor

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxAgents is how many agents a quota counts by name at once when
// Config.MaxAgents is 0: enough for a team of agents and the callers of a
// shared server, few enough that per-agent series stay cheap to keep in
// Prometheus and to sum in a store. MaxMaxAgents is the most a Config may
// ask for: a Redis store reads every agent's buckets at each Peek.
const (
	DefaultMaxAgents = 32
	MaxMaxAgents     = 1000
)

// MaxAgentLen is the longest agent name kept, in bytes; CleanAgent cuts a
// longer one (on a rune boundary) and governor.acquire refuses it.
const MaxAgentLen = 128

// CleanAgent returns name as the governor counts it: valid UTF-8, every
// control character (NUL, newlines, escapes: anything unicode.IsControl)
// replaced by U+FFFD, at most MaxAgentLen bytes. Names reach events,
// metrics labels and store keys; none of them may carry a control
// character or an invalid byte. Identities are checked before they get
// here; this is the governor's own guard.
func CleanAgent(name string) string {
	if len(name) <= MaxAgentLen && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsControl) < 0 {
		return name
	}
	name = strings.ToValidUTF8(name, "\uFFFD")
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, name)
	for len(name) > MaxAgentLen {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

// agentProblem says what is wrong with an agent name a caller chose, or
// "" when nothing is.
func agentProblem(name string) string {
	switch {
	case len(name) > MaxAgentLen:
		return "agent is longer than 128 bytes"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "agent holds a control character"
	}
	return ""
}

type agentKey struct{}

// WithAgent returns ctx carrying the agent that draws on its behalf: the
// egress requests of a tool call count under its caller.
func WithAgent(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, agentKey{}, agent)
}

// AgentFrom returns the agent ctx carries; "" when it carries none.
func AgentFrom(ctx context.Context) string {
	a, _ := ctx.Value(agentKey{}).(string)
	return a
}
