package plan

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrace renders some golden logs as traces and compares them with
// testdata/golden/trace.txt (rewritten with -update).
func TestTrace(t *testing.T) {
	var out bytes.Buffer
	for _, name := range []string{"one_replan", "reuse_after_replan", "step_budget", "retries", "invalid_plan", "fatal_budget_exceeded", "on_failure_skip_dependents", "on_failure_abort"} {
		b, err := os.ReadFile(filepath.Join("testdata", "golden", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		evs, err := ReadJSONL(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "== %s\n", name)
		tr := NewTrace(&out, false)
		for _, e := range evs {
			tr.Event(e)
		}
	}
	path := filepath.Join("testdata", "golden", "trace.txt")
	if *update {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("trace differs from %s (-update rewrites it):\n%s", path, out.String())
	}
}

func TestTraceStrike(t *testing.T) {
	var out bytes.Buffer
	tr := NewTrace(&out, true)
	tr.Event(Event{Kind: EventPlanDiff, Revision: 1, Steps: []Step{{ID: 1, ToolName: "a"}}, Added: []int{1}})
	tr.Event(Event{Kind: EventPlanDiff, Revision: 2, Steps: []Step{{ID: 2, ToolName: "b"}}, Removed: []int{1}, Added: []int{2},
		Cause: &Error{Kind: "schema", StepID: 0}})
	if !strings.Contains(out.String(), "- \x1b[9m1 a\x1b[29m") || !strings.Contains(out.String(), "+ 2 b") {
		t.Errorf("trace:\n%q", out.String())
	}
	if got := clip("ééé", 3); got != "é…" {
		t.Errorf("clip cut a rune: %q", got)
	}
}
