// Package helm tests the toolhost Helm chart offline: it renders the chart
// with Helm's own Go packages for each values file of testdata/values,
// decodes every object strictly into its Kubernetes API type (a field the
// API does not have fails), compares the output with testdata/golden
// (go test -update rewrites them), and checks the chart's invariants.
// It is a module of its own so that the server's go.mod never gains Helm
// or Kubernetes.
package helm

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the rendered chart")

// serviceMonitor is the part of prometheus-operator's ServiceMonitor the
// chart writes (its Go types would bring the operator's module).
type serviceMonitor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			Authorization struct {
				Type        string                   `json:"type"`
				Credentials corev1.SecretKeySelector `json:"credentials"`
			} `json:"authorization"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// objects are one rendering's decoded objects.
type objects struct {
	deployment *appsv1.Deployment
	service    *corev1.Service
	configMap  *corev1.ConfigMap
	pdb        *policyv1.PodDisruptionBudget
	monitor    *serviceMonitor
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load("toolhost")
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// render renders the chart with the values of file (YAML) as release
// "th" in namespace "tools", and returns the manifests by template name.
func render(t *testing.T, ch *chart.Chart, values []byte) (map[string]string, error) {
	t.Helper()
	var vals map[string]any
	if err := yaml.Unmarshal(values, &vals); err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "th", Namespace: "tools", IsInstall: true, Revision: 1},
		chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Render(ch, rv)
}

// decode splits the manifests into documents and decodes each strictly
// into the type of its kind.
func decode(t *testing.T, manifests map[string]string) objects {
	t.Helper()
	var o objects
	for _, name := range sortedKeys(manifests) {
		for _, doc := range strings.Split(manifests[name], "\n---") {
			if strings.TrimSpace(doc) == "" || strings.HasSuffix(name, ".tpl") {
				continue
			}
			var head struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var into any
			switch head.Kind {
			case "Deployment":
				o.deployment = &appsv1.Deployment{}
				into = o.deployment
			case "Service":
				o.service = &corev1.Service{}
				into = o.service
			case "ConfigMap":
				o.configMap = &corev1.ConfigMap{}
				into = o.configMap
			case "PodDisruptionBudget":
				o.pdb = &policyv1.PodDisruptionBudget{}
				into = o.pdb
			case "ServiceMonitor":
				o.monitor = &serviceMonitor{}
				into = o.monitor
			default:
				t.Fatalf("%s: an object of kind %q the test does not know", name, head.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				t.Fatalf("%s: not a valid %s: %v\n%s", name, head.Kind, err, doc)
			}
		}
	}
	if o.deployment == nil || o.service == nil {
		t.Fatal("no Deployment or Service rendered")
	}
	return o
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func TestChartRendersValidObjects(t *testing.T) {
	ch := loadChart(t)
	files, _ := filepath.Glob("testdata/values/*.yaml")
	if len(files) == 0 {
		t.Fatal("no values files")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			values, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			manifests, err := render(t, ch, values)
			if err != nil {
				t.Fatal(err)
			}
			o := decode(t, manifests)
			checkInvariants(t, o)
			var out bytes.Buffer
			for _, tpl := range sortedKeys(manifests) {
				if body := strings.TrimSpace(manifests[tpl]); body != "" {
					fmt.Fprintf(&out, "# %s\n%s\n---\n", tpl, body)
				}
			}
			golden := filepath.Join("testdata", "golden", name+".yaml")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(want, out.Bytes()) {
				t.Errorf("%s differs from the rendered chart (go test -update rewrites it); got:\n%s", golden, out.String())
			}
		})
	}
}

// checkInvariants: what must hold whatever the values.
func checkInvariants(t *testing.T, o objects) {
	t.Helper()
	pod := o.deployment.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	sc := c.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("container security context %+v, want a read-only root, no privilege escalation, every capability dropped", sc)
	}
	if psc := pod.SecurityContext; psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Error("the pod may run as root")
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Error("no resource requests")
	}
	// A read-only root: the compilation cache needs a writable volume.
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/cache" }) {
		t.Error("no volume at /cache (XDG_CACHE_HOME) for the compilation cache")
	}
	for _, e := range c.Env {
		if e.Name == "TOOLHOST_TOKENS" && (e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
			t.Error("TOOLHOST_TOKENS is not a Secret reference")
		}
	}
	replicas := int32(1)
	if o.deployment.Spec.Replicas != nil {
		replicas = *o.deployment.Spec.Replicas
	}
	redis := slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--redis=") })
	if replicas > 1 && !redis {
		t.Errorf("%d replicas without --redis", replicas)
	}
	if (replicas > 1) != (o.pdb != nil) {
		t.Errorf("%d replicas, PodDisruptionBudget rendered: %v", replicas, o.pdb != nil)
	}
	if o.service.Spec.Ports[0].TargetPort.String() != "http" || c.Ports[0].ContainerPort != 7331 {
		t.Error("the Service does not reach the container's port 7331")
	}
}

// The probe paths are the server's: package server registers GET /readyz
// and GET /healthz on its mux.
func TestProbePathsAreTheServers(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "server", "server.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`"GET /readyz"`, `"GET /healthz"`} {
		if !bytes.Contains(src, []byte(p)) {
			t.Errorf("server/server.go no longer registers %s: the chart's probes must follow", p)
		}
	}
}

func TestChartRefusesUnsafeValues(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct{ name, values, want string }{
		{"replicas without redis", "replicaCount: 2\ntokens: {existingSecret: t}\n", "replicaCount > 1 needs Redis"},
		{"no authentication", "{}\n", "set tokens.existingSecret"},
		{"monitor without token", "tokens: {existingSecret: t}\nserviceMonitor: {enabled: true}\n", "serviceMonitor.tokenSecret.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, ch, []byte(tc.values))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}
