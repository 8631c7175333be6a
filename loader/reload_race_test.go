package loader_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
	"github.com/toolhost/toolhost/registry"
)

// reloadAfterLookup is the folder with the race of issue 10 finding 4
// forced on every call: each lookup hands out the record then a reload
// replaces the file, so the call starts on a module already retired.
type reloadAfterLookup struct {
	t    *testing.T
	live *loader.Live
	src  string
	dst  string
	n    byte
}

func (r *reloadAfterLookup) Lookup(name string) (*registry.Tool, bool) {
	rec, ok := r.live.Lookup(name)
	r.n++
	copyFile(r.t, r.src, r.dst, variant(r.n)...)
	if ch, err := r.live.Rescan(context.Background()); err != nil || len(ch.Loaded) != 1 {
		r.t.Errorf("reload %d: %+v, %v", r.n, ch, err)
	}
	return rec, ok
}

// A call that loses the race with a reload runs on the new version: it
// never fails, never counts against the breaker (five failures would open
// it), and nothing is stored under its idempotency key but its result.
func TestReloadRaceNeverFailsACall(t *testing.T) {
	ctx := context.Background()
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	dir := t.TempDir()
	dst := filepath.Join(dir, "echo.wasm")
	copyFile(t, echo, dst)
	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := &reloadAfterLookup{t: t, live: live, src: echo, dst: dst}
	d := dispatcher.New(tools, dispatcher.Config{})
	for i := range 12 {
		args := json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
		o := d.Do(ctx, dispatcher.Call{Tool: "wat.echo", Args: args})
		if o.Err != nil || string(o.Result) != string(args) || o.Attempts != 1 {
			t.Fatalf("call %d racing a reload: %s, %d attempts, %v", i, o.Result, o.Attempts, o.Err)
		}
	}
	args := json.RawMessage(`{"keyed":true}`)
	opts := dispatcher.Options{IdempotencyKey: "k1"}
	for range 2 { // the second is a replay of the first: the result, not a failure
		o := d.Do(ctx, dispatcher.Call{Tool: "wat.echo", Args: args, Options: opts})
		if o.Err != nil || string(o.Result) != string(args) {
			t.Fatalf("keyed call racing a reload: %s, %v", o.Result, o.Err)
		}
	}
}
