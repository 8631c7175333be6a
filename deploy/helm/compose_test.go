package helm

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The Compose file (deploy/compose) is checked here too, beside the chart,
// so that YAML stays out of the server's module. It is decoded strictly
// into the part of the Compose specification it uses (a key it should not
// have fails), and its invariants are checked against its HAProxy and
// toolhost configs; HAProxy's own checker reads haproxy.cfg.

type composeFile struct {
	Name     string                           `json:"name"`
	XReplica composeService                   `json:"x-replica"`
	Services map[string]composeService        `json:"services"`
	Configs  map[string]struct{ File string } `json:"configs"`
	Volumes  map[string]*struct{}             `json:"volumes"`
}

type composeService struct {
	Image string `json:"image"`
	Build *struct {
		Context    string `json:"context"`
		Dockerfile string `json:"dockerfile"`
	} `json:"build"`
	Command     []string          `json:"command"`
	Environment map[string]string `json:"environment"`
	Configs     []struct {
		Source string `json:"source"`
		Target string `json:"target"`
	} `json:"configs"`
	DependsOn   any      `json:"depends_on"`
	ReadOnly    bool     `json:"read_only"`
	User        string   `json:"user"`
	Restart     string   `json:"restart"`
	Volumes     []string `json:"volumes"`
	Ports       []string `json:"ports"`
	Healthcheck *struct {
		Test     []string `json:"test"`
		Interval string   `json:"interval"`
		Timeout  string   `json:"timeout"`
		Retries  int      `json:"retries"`
	} `json:"healthcheck"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	raw, err := os.ReadFile("../compose/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

func TestComposeFleet(t *testing.T) {
	c := readCompose(t)
	var replicas []string
	for name, s := range c.Services {
		if !strings.HasPrefix(name, "toolhost-") {
			continue
		}
		replicas = append(replicas, name)
		if s.Build == nil || s.Build.Context != "../../dist/image" || s.Build.Dockerfile != "Containerfile" {
			t.Errorf("%s: build %+v, want make dist's dist/image with its Containerfile", name, s.Build)
		}
		if !slices.Contains(s.Command, "0.0.0.0:7331") || !slices.Contains(s.Command, "/etc/toolhost/toolhost.toml") {
			t.Errorf("%s: command %q, want serve on 0.0.0.0:7331 with the mounted config", name, s.Command)
		}
		if !strings.Contains(s.Environment["TOOLHOST_TOKENS"], ":?") {
			t.Errorf("%s: TOOLHOST_TOKENS = %q, want it required (${TOOLHOST_TOKENS:?...}): off loopback serve needs tokens", name, s.Environment["TOOLHOST_TOKENS"])
		}
		if !s.ReadOnly || s.User != "65532:65532" || len(s.Volumes) != 1 || !strings.HasSuffix(s.Volumes[0], ":/cache") {
			t.Errorf("%s: read_only %v, user %q, volumes %q; want read-only, non-root, one writable /cache", name, s.ReadOnly, s.User, s.Volumes)
		}
		if vol, _, _ := strings.Cut(s.Volumes[0], ":"); c.Volumes != nil {
			if _, ok := c.Volumes[vol]; !ok {
				t.Errorf("%s: volume %s is not declared", name, vol)
			}
		}
	}
	slices.Sort(replicas)
	if len(replicas) != 3 {
		t.Fatalf("replicas %q, want three", replicas)
	}

	// HAProxy balances over exactly those replicas and checks the
	// readiness path the server serves (and the chart probes).
	cfg, err := os.ReadFile("../compose/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	var backends []string
	for _, m := range regexp.MustCompile(`(?m)^\s*server \S+ (\S+):7331 check`).FindAllStringSubmatch(string(cfg), -1) {
		backends = append(backends, m[1])
	}
	slices.Sort(backends)
	if !slices.Equal(backends, replicas) {
		t.Errorf("haproxy.cfg's servers %q, want the replicas %q", backends, replicas)
	}
	if !strings.Contains(string(cfg), "uri /readyz") || !strings.Contains(string(cfg), "stick on req.hdr(Mcp-Session-Id)") {
		t.Error("haproxy.cfg must check /readyz and keep sessions on their replica")
	}
	if hp := c.Services["haproxy"]; !slices.Equal(hp.Ports, []string{"127.0.0.1:7330:7330"}) {
		t.Errorf("haproxy ports %q, want the fleet's port 7330 on loopback", hp.Ports)
	}

	// The config names the Redis service and the number of replicas.
	toml, err := os.ReadFile("../compose/toolhost.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Services["redis"]; !ok || !strings.Contains(string(toml), `url = "redis://redis:6379/0"`) ||
		!strings.Contains(string(toml), "replicas = 3") {
		t.Errorf("toolhost.toml:\n%s\nwant the redis service's URL and replicas = 3", toml)
	}
	for name, cf := range c.Configs {
		if _, err := os.Stat("../compose/" + cf.File); err != nil {
			t.Errorf("config %s: %v", name, err)
		}
	}
}

// HAProxy's own checker accepts haproxy.cfg (the replicas' names do not
// resolve here: init-addr none lets it start without them).
func TestComposeHAProxyConfigValid(t *testing.T) {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("haproxy not found (.ci/run installs it)")
		}
		t.Skip("haproxy not found: apt-get install haproxy to check deploy/compose/haproxy.cfg")
	}
	if out, err := exec.Command(haproxy, "-c", "-f", "../compose/haproxy.cfg").CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
}
