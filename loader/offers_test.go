package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// TestLoadOffers: a module's resources, templates and prompts are served
// beside its tools and read through its call path; a second file offering
// one of its URIs is refused naming both files, and an invalid offer is a
// load error that says what is wrong.
func TestLoadOffers(t *testing.T) {
	ctx := context.Background()
	rt, err := host.New(ctx, host.Config{CacheDir: filepath.Join(os.TempDir(), "toolhost-test-cache"), DescribeTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	dir := t.TempDir()
	wat := func(name string) string { return testwasm.WAT(t, "host/testdata/wat/"+name+".wat") }
	copyFile(t, wat("offers"), filepath.Join(dir, "a-offers.wasm"))
	copyFile(t, wat("offersdup"), filepath.Join(dir, "b-offersdup.wasm"))
	copyFile(t, wat("badoffer"), filepath.Join(dir, "c-badoffer.wasm"))
	res, err := loader.Load(ctx, rt, dir, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, le := range res.Errors {
		reasons[filepath.Base(le.Path)] = le.Reason
	}
	if r := reasons["b-offersdup.wasm"]; !strings.Contains(r, `resource "wat://shared" is also declared by `) || !strings.Contains(r, "a-offers.wasm") {
		t.Errorf("the clash: %q", r)
	}
	if r := reasons["c-badoffer.wasm"]; !strings.Contains(r, `resources[0]: uri "shared.txt" is not an absolute URI`) {
		t.Errorf("the bad offer: %q", r)
	}
	o := res.Registry.Offers()
	if len(o.Resources) != 1 || o.Resources[0].URI != "wat://shared" || len(o.Templates) != 1 || len(o.Prompts) != 1 ||
		filepath.Base(o.Resources[0].Module.Path) != "a-offers.wasm" {
		t.Fatalf("offers = %+v %+v %+v", o.Resources, o.Templates, o.Prompts)
	}
	if _, ok := res.Registry.Lookup("wat.offersdup"); ok {
		t.Error("the refused file's tool is served")
	}
	got, err := o.Resources[0].Handler.Handle(ctx, []byte(`{"uri":"wat://shared"}`))
	if err != nil || string(got) != `{"contents":[{"uri":"wat://shared","text":"shared"}]}` {
		t.Errorf("read = %s, %v", got, err)
	}
	if o.Resources[0].Timeout != 30*time.Second {
		t.Errorf("read timeout %v, want the ABI default", o.Resources[0].Timeout)
	}
}
