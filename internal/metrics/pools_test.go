package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestWarmInstanceMetrics(t *testing.T) {
	m := New(Gauges{})
	m.Registry().MustRegister(Instances{
		Pools: func() []Pool {
			// Two rows of one tool: a replaced module version draining.
			return []Pool{{Tool: "a", Idle: 2, Busy: 1, Callers: 2}, {Tool: "a", Idle: 1, Callers: 1}, {Tool: "b", Warming: 1, Callers: 1}}
		},
		Retired: func() map[string]uint64 { return map[string]uint64{"uses": 3, "error": 1} },
		Modes:   func() map[string]string { return map[string]string{"a": "reuse", "c": "fresh"} },
	})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`toolhost_warm_instances{state="idle",tool="a"} 3`,
		`toolhost_warm_instances{state="busy",tool="a"} 1`,
		`toolhost_warm_instances{state="warming",tool="b"} 1`,
		`toolhost_warm_pools{tool="a"} 3`,
		`toolhost_warm_retired_total{reason="uses"} 3`,
		`toolhost_warm_retired_total{reason="error"} 1`,
		`toolhost_tool_instances{mode="reuse",tool="a"} 1`,
		`toolhost_tool_instances{mode="fresh",tool="c"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q\n%s", want, body)
		}
	}
}
