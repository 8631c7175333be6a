package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The TypeScript SDK's client (experimental Tasks, 2025-11-25) runs a
// tool as a task to its result, cancels one while its guest runs, and
// is refused an unknown task id, against a real server (conformance/ts/
// tasks.mjs).
func TestTypeScriptTasks(t *testing.T) {
	dir := tsDir(t)
	conf := filepath.Join(t.TempDir(), "toolhost.toml")
	if err := os.WriteFile(conf, []byte("[dispatch]\ntask_offer_after = \"40s\"\n\n[tools.sleep]\ntimeout = \"50s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, pluginsDir(t), "--config", conf)
	cmd := exec.Command("node", "tasks.mjs", srv.url)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node tasks.mjs: %v\n%s\nserver log:\n%s", err, out, srv.stderr.String())
	}
	steps := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var s map[string]any
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		steps[s["step"].(string)] = s
	}
	if f, ok := steps["fatal"]; ok {
		t.Fatalf("the client failed: %v", f)
	}
	connect := steps["connect"]
	if tasks, _ := connect["tasks"].(map[string]any); tasks["cancel"] == nil || tasks["requests"] == nil {
		t.Fatalf("capabilities.tasks %v, want cancel and requests.tools.call", connect["tasks"])
	}
	// sleep's timeout (50 s) is over task_offer_after (40 s); text.count's
	// (30 s) is not: only sleep is offered, though any tool may run as a task.
	if support, _ := connect["taskSupport"].(map[string]any); support["sleep"] != "optional" || support["text.count"] != nil {
		t.Fatalf("execution.taskSupport %v, want sleep optional and text.count absent", support)
	}
	done := steps["complete"]
	kinds, _ := json.Marshal(done["kinds"])
	res, _ := json.Marshal(done["result"])
	if !strings.HasPrefix(string(kinds), `["taskCreated",`) || !strings.HasSuffix(string(kinds), `"status:completed","result"]`) ||
		!strings.Contains(string(res), `"words":3`) {
		t.Fatalf("a task to its end: kinds %s, result %s", kinds, res)
	}
	if c := steps["cancel"]; c["cancelled"] != "cancelled" || c["after"] != "cancelled" {
		t.Fatalf("cancel: %v", c)
	}
	if u, _ := steps["unknown"]["error"].(map[string]any); u == nil || u["code"] != float64(-32602) {
		t.Fatalf("an unknown task id: %v, want -32602", steps["unknown"])
	}
}
