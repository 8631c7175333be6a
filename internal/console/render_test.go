package console

import (
	"strings"
	"testing"
)

// Every value from the server's state is escaped, in text and in
// attributes alike.
func TestRenderEscapesValues(t *testing.T) {
	bad := `"><script>alert(1)</script>&`
	var o out
	renderView(&o, "all", pageData{
		Filter:   bad,
		Files:    []fileRow{{Path: bad, State: bad, Version: bad, Note: bad, Tools: []toolRow{{Name: bad, Wire: bad, Title: bad, Flags: bad, Timeout: bad}}}},
		Breakers: []breakerRow{{Tool: bad, State: bad, CoolDown: bad}},
		Quotas:   []quotaRow{{Name: bad, Mode: bad, Blocked: bad, Agents: []agentRow{{Name: bad}}}},
		Calls:    []callRow{{Time: bad, Tool: bad, Caller: bad, Outcome: bad}},
	})
	got := o.String()
	if strings.Contains(got, "<script") || strings.Contains(got, `"><script`) {
		t.Fatalf("a value reached the page unescaped:\n%s", got)
	}
	if n := strings.Count(got, "&lt;script&gt;"); n < 20 {
		t.Errorf("%d escaped values, want every one of them (20+)", n)
	}
}
