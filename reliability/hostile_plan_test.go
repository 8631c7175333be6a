package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/plan"
	"github.com/toolhost/toolhost/transport"
)

// Finding 10.1: a plan of about 44 KB over the json tools whose third
// step names the second step's ~200 KB result 1,400 times. Before the fix
// the server built those 280 MB of arguments (one more such step is 400
// GB; a 36 KB plan ended in "fatal error: out of memory"); now the step is
// refused while its size is counted, before anything is built.
func TestHostilePlanReferencesMultiply(t *testing.T) {
	r := newRig(t, rigConfig{})
	defer r.close()
	r.mustLoad("jsontools.wasm", testwasm.Go(t, "./tools-src/jsontools"))
	cs := serveHTTP(t, r, transport.Options{Logger: slog.New(slog.DiscardHandler), MaxArgsBytes: 1 << 20,
		Plans: &transport.PlanOptions{}}, nil)

	refs := func(step, n int) string {
		ref := fmt.Sprintf(`{"$ref":"/steps/%d/result"}`, step)
		return "[" + strings.Repeat(ref+",", n-1) + ref + "]"
	}
	args := fmt.Sprintf(`{"goal":"multiply","steps":[
		{"id":1,"tool_name":"json.get","args":{"doc":%q,"pointer":""}},
		{"id":2,"tool_name":"json.get","args":{"doc":%s,"pointer":""}},
		{"id":3,"tool_name":"json.get","args":{"doc":%s,"pointer":""}}]}`,
		strings.Repeat("x", 1000), refs(1, 200), refs(2, 1400))
	t.Logf("plan request: %d bytes", len(args))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: transport.PlanToolName, Arguments: json.RawMessage(args)})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	var sr plan.SessionResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.History) != 3 || sr.History[1].Error != nil || len(sr.History[1].Result) < 200_000 {
		t.Fatalf("session %s (%s): %s; want steps 1 and 2 to run", sr.Status, sr.Reason, sr.Message)
	}
	if e := sr.History[2].Error; e == nil || e.Kind != "schema" || !strings.Contains(e.Message, "after $ref substitution") {
		t.Fatalf("step 3: %+v; want it refused for its size", e)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("the session allocated %d MiB in all (response: %d bytes)", alloc>>20, len(b))
	if alloc > 256<<20 {
		t.Errorf("the session allocated %d MiB: the refused arguments were built", alloc>>20)
	}
	r.stillServes()
}
