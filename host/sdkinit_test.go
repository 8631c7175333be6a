package host_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
)

// TestSDKInitsAsMinimal: a tool built with the Go SDK runs no package
// init in its instances beyond what a minimal hand-written reactor runs,
// except the SDK's own (one allocation), context and the tool's main: every init
// runs in every fresh instance, so a heavy import in the SDK would cost
// every call of every tool (invopop/jsonschema's YAML library once cost
// 2.9 ms of a 10 ms call). GODEBUG=inittrace=1 makes the Go runtime list
// them on stderr.
func TestSDKInitsAsMinimal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two Go modules")
	}
	inits := func(pkg string) map[string]bool {
		raw := newRawRuntime(t)
		var stderr bytes.Buffer
		raw.cfg = raw.cfg.WithEnv("GODEBUG", "inittrace=1").WithStderr(&stderr)
		ctx := context.Background()
		mod, err := raw.rt.InstantiateModule(ctx, raw.compile(t, testwasm.Go(t, pkg)), raw.cfg)
		if err != nil {
			t.Fatal(err)
		}
		mod.Close(ctx)
		got := map[string]bool{}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[0] == "init" && strings.HasPrefix(f[2], "@") {
				got[f[1]] = true
			}
		}
		if len(got) == 0 {
			t.Fatalf("%s: no inittrace lines on stderr: %q", pkg, stderr.String())
		}
		return got
	}
	// Beyond the minimal reactor's: the SDK itself, the tool, and context
	// (the calls' context that progress and log take: one allocation).
	allowed := map[string]bool{"github.com/toolhost/toolhost/abi/guest": true, "main": true, "context": true}
	// tools-src/text links regexp (text.find), whose unicode tables are
	// built at init: its floor is the minimal reactor with regexp.
	for _, pair := range [][2]string{
		{"./host/testdata/sdkcount", "./host/testdata/minimal"},
		{"./tools-src/text", "./host/testdata/minimalregexp"},
	} {
		floor := inits(pair[1])
		for pkg := range inits(pair[0]) {
			if !floor[pkg] && !allowed[pkg] {
				t.Errorf("%s, built with the SDK, runs init of %s in every instance; %s does not", pair[0], pkg, pair[1])
			}
		}
	}
}
