package telemetry_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Only cmd/toolhost may know exporters and the SDK: every other package
// makes spans through the otel API alone (docs/ARCHITECTURE.md). The OTLP
// receiver of the tests (internal/testkit/otlptest) decodes with the SDK.
func TestOnlyTheCLIImportsTheSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/toolhost/toolhost/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	forbidden := []string{"github.com/toolhost/toolhost/internal/telemetry", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters"}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, " ")
		if pkg == "github.com/toolhost/toolhost/cmd/toolhost" || strings.HasPrefix(pkg, "github.com/toolhost/toolhost/internal/telemetry") ||
			pkg == "github.com/toolhost/toolhost/internal/testkit/otlptest" {
			continue
		}
		checked++
		for _, d := range strings.Fields(deps) {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s imports %s", pkg, d)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d packages: go list printed\n%s", checked, out)
	}
}
