package archtest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/toolhost/toolhost"

// aliases name the outside dependencies the table's last column speaks
// of; anything else backticked there is a package of this module.
var aliases = map[string]string{
	"wazero":     "github.com/toolhost/toolhost/third_party/wazero",
	"mcp":        "github.com/modelcontextprotocol/go-sdk/mcp",
	"go-redis":   "github.com/redis/go-redis",
	"cobra":      "github.com/spf13/cobra",
	"otel":       "go.opentelemetry.io/otel",
	"prometheus": "github.com/prometheus",
	"go-jose":    "github.com/go-jose/go-jose",
	"gonum":      "gonum.org/v1",
}

// nonStd in the last column forbids every import outside the standard
// library (and this module's own packages the row does not name).
const nonStd = "non-std"

type row struct {
	pkgs      []string // module-relative paths, "dir/*" for every package under dir
	forbidden []string
}

var tick = regexp.MustCompile("`([^`]+)`")

// readTable reads the package table: the rows under "## Packages" whose
// first cell names packages; the last cell's backticked words are what the
// row's packages must not import.
func readTable(t *testing.T) []row {
	t.Helper()
	f, err := os.Open("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Packages"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			t.Fatalf("ARCHITECTURE.md: a package row needs 4 cells (package, job, must not know, imports none of): %q", line)
		}
		var r row
		for _, m := range tick.FindAllStringSubmatch(cells[0], -1) {
			r.pkgs = append(r.pkgs, m[1])
		}
		for _, m := range tick.FindAllStringSubmatch(cells[3], -1) {
			r.forbidden = append(r.forbidden, m[1])
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("ARCHITECTURE.md has no package table under ## Packages")
	}
	return rows
}

// deps lists every package of the module with its transitive imports
// (tests excluded: a test may import anything).
func deps(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...")
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	m := make(map[string][]string)
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) > 0 {
			m[f[0]] = f[1:]
		}
	}
	return m
}

func covers(entry, pkg string) bool {
	if dir, ok := strings.CutSuffix(entry, "/*"); ok {
		return strings.HasPrefix(pkg, dir+"/")
	}
	return entry == pkg
}

// violates says whether import path imp is one that rule forbids.
func violates(rule, imp string) bool {
	if rule == nonStd {
		return !isStd(imp) && !strings.HasPrefix(imp, module+"/")
	}
	target, ok := aliases[rule]
	if !ok {
		target = module + "/" + rule
	}
	return imp == target || strings.HasPrefix(imp, target+"/")
}

// isStd: standard-library paths have no dot in their first element.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func TestTableCoversEveryPackage(t *testing.T) {
	rows := readTable(t)
	all := deps(t)
	for full := range all {
		pkg := strings.TrimPrefix(full, module+"/")
		found := slices.ContainsFunc(rows, func(r row) bool {
			return slices.ContainsFunc(r.pkgs, func(e string) bool { return covers(e, pkg) })
		})
		if !found {
			t.Errorf("package %s is not in docs/ARCHITECTURE.md's package table: add a row saying its job and what it must not know", pkg)
		}
	}
	for _, r := range rows {
		for _, e := range r.pkgs {
			found := false
			for full := range all {
				if covers(e, strings.TrimPrefix(full, module+"/")) {
					found = true
				}
			}
			if !found {
				t.Errorf("docs/ARCHITECTURE.md's package table names %s, which is not a package of the module", e)
			}
		}
	}
}

func TestImportsKeepTheTable(t *testing.T) {
	rows := readTable(t)
	all := deps(t)
	for full, imports := range all {
		pkg := strings.TrimPrefix(full, module+"/")
		for _, r := range rows {
			if !slices.ContainsFunc(r.pkgs, func(e string) bool { return covers(e, pkg) }) {
				continue
			}
			for _, rule := range r.forbidden {
				for _, imp := range imports {
					if violates(rule, imp) && path.Clean(imp) != full {
						t.Errorf("%s imports %s (directly or through its imports), but docs/ARCHITECTURE.md says it must not know %s", pkg, imp, rule)
						break
					}
				}
			}
		}
	}
}

// TestViolationIsCaught keeps the check itself honest: a rule that some
// import breaks must be reported.
func TestViolationIsCaught(t *testing.T) {
	cases := []struct {
		rule, imp string
		want      bool
	}{
		{"wazero", "github.com/toolhost/toolhost/third_party/wazero/api", true},
		{"wazero", "github.com/toolhost/toolhost/third_party/wazerox", false},
		{"host", module + "/host", true},
		{"host", module + "/hostmatch", false},
		{"mcp", "github.com/modelcontextprotocol/go-sdk/mcp", true},
		{nonStd, "golang.org/x/net/idna", true},
		{nonStd, "encoding/json", false},
		{nonStd, module + "/abi", false},
	}
	for _, c := range cases {
		if got := violates(c.rule, c.imp); got != c.want {
			t.Errorf("violates(%q, %q) = %v, want %v", c.rule, c.imp, got, c.want)
		}
	}
}

// readPublic reads the "Public:" line under "## Packages": the packages
// outside internal/ and cmd/ an outsider may import.
func readPublic(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for line := range strings.Lines(string(doc)) {
		switch {
		case strings.HasPrefix(line, "## "):
			in = strings.TrimSpace(line) == "## Packages"
		case in && strings.HasPrefix(line, "Public: "):
			var pkgs []string
			for _, m := range tick.FindAllStringSubmatch(line, -1) {
				pkgs = append(pkgs, m[1])
			}
			return pkgs
		}
	}
	t.Fatal(`ARCHITECTURE.md has no "Public: " line under ## Packages`)
	return nil
}

// isInternal: under an internal/ folder (the go command keeps such a
// package from outsiders), or a command under cmd/.
func isInternal(pkg string) bool {
	return pkg == "internal" || strings.HasPrefix(pkg, "internal/") || strings.Contains(pkg, "/internal/") ||
		strings.HasSuffix(pkg, "/internal") || strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "third_party/")
}

// TestOnlyListedPackagesArePublic: a package an outsider can import is a
// decision, written down; anything else goes under internal/.
func TestOnlyListedPackagesArePublic(t *testing.T) {
	public := readPublic(t)
	all := deps(t)
	for full := range all {
		pkg := strings.TrimPrefix(full, module+"/")
		if !isInternal(pkg) && !slices.Contains(public, pkg) {
			t.Errorf("package %s can be imported by anyone, but docs/ARCHITECTURE.md's Public line does not list it: list it, or move it under internal/", pkg)
		}
	}
	for _, pkg := range public {
		if _, ok := all[module+"/"+pkg]; !ok || isInternal(pkg) {
			t.Errorf("docs/ARCHITECTURE.md's Public line names %s, which is not a public package of the module", pkg)
		}
	}
}

func TestIsInternal(t *testing.T) {
	for pkg, want := range map[string]bool{
		"internal/config": true, "host/internal/kick": true, "cmd/toolhost": true, "cmd/toolhost-storm/internal/storm": true,
		"third_party/wazero/api": true, "host": false, "internalx": false, "breaker/redisstore": false,
	} {
		if got := isInternal(pkg); got != want {
			t.Errorf("isInternal(%q) = %v, want %v", pkg, got, want)
		}
	}
}
