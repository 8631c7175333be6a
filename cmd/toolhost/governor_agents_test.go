package main

import (
	"testing"

	"github.com/toolhost/toolhost/governor"
)

// The status table names the agents that used most, quoted (an anonymous
// "" and names with spaces read plainly), and how many more there are.
func TestTopAgents(t *testing.T) {
	agents := map[string]governor.AgentUsage{"b": {Used: 5}, "a": {Used: 5}, "": {Used: 9}, "with space": {Used: 1}}
	for n, want := range map[int]string{
		3: `""=9 "a"=5 "b"=5 +1 more`,
		9: `""=9 "a"=5 "b"=5 "with space"=1`,
	} {
		if got := topAgents(agents, n); got != want {
			t.Errorf("topAgents(%d) = %s; want %s", n, got, want)
		}
	}
	if got := topAgents(nil, 3); got != "-" {
		t.Errorf("no agents: %q", got)
	}
}
