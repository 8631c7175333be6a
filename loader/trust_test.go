package loader_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolhost/toolhost/internal/testkit/testwasm"
	"github.com/toolhost/toolhost/loader"
)

// gate admits the (name, sha256) pairs it was told of, as serve's lock
// file check does.
type gate struct {
	mu sync.Mutex
	ok map[string]string
}

var errUnsigned = errors.New("no verified signature recorded for it")

func (g *gate) admit(name, sum string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ok[name] == sum {
		return nil
	}
	return errUnsigned
}

func (g *gate) allow(name string, b []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := sha256.Sum256(b)
	g.ok[name] = hex.EncodeToString(s[:])
}

// The trust gate refuses a file it does not admit, with its reason as the
// file's state, once per bytes; it is asked again on each rescan, so the
// same unchanged bytes load once it admits them; a refused new version
// leaves the admitted old one serving.
func TestTrustGate(t *testing.T) {
	ctx := context.Background()
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	b, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "echo.wasm")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g := &gate{ok: map[string]string{}}
	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{Admit: g.admit, AdmitFile: "toolhost.lock"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := live.Lookup("wat.echo"); ok {
		t.Fatal("an untrusted module is served")
	}
	files := live.Files()
	if len(files) != 1 || files[0].State != loader.StateRefused || !strings.Contains(files[0].Reason, "not trusted: no verified signature") {
		t.Fatalf("files %+v, want echo.wasm refused as not trusted", files)
	}
	if ch, _ := live.Rescan(ctx); !ch.Empty() {
		t.Fatalf("a second rescan of the same refused bytes reports again: %+v", ch)
	}

	g.allow("echo.wasm", b) // what a pull recording the file does
	ch, err := live.Rescan(ctx)
	if err != nil || len(ch.Loaded) != 1 {
		t.Fatalf("after the gate admits the bytes: %+v %v, want them loaded", ch, err)
	}
	if _, ok := live.Lookup("wat.echo"); !ok {
		t.Fatal("admitted module not served")
	}

	// A new version the gate does not know: refused, the old one serves.
	if err := os.WriteFile(path, append(b, variant(7)...), 0o644); err != nil {
		t.Fatal(err)
	}
	ch, _ = live.Rescan(ctx)
	var ue *loader.UntrustedError
	if len(ch.Errors) != 1 || !errors.As(ch.Errors[0].Err, &ue) || !errors.Is(ue, errUnsigned) {
		t.Fatalf("change %+v, want the new bytes refused by the gate", ch)
	}
	if got, ok := live.Lookup("wat.echo"); !ok || got.Module.SHA256 != g.ok["echo.wasm"] {
		t.Fatal("the admitted old version stopped serving")
	}
	os.Remove(path)
	live.Rescan(ctx)
	if files := live.Files(); len(files) != 0 {
		t.Fatalf("after removal: %+v, want no files", files)
	}
}

// A refused new version whose bytes the gate admits later, with the file
// untouched (its stamp unchanged), replaces the old version at the next
// rescan: the gate is asked again about the bytes it refused, not about
// the serving version's.
func TestTrustGateAdmitsUnchangedBytesLater(t *testing.T) {
	ctx := context.Background()
	echo := testwasm.WAT(t, "host/testdata/wat/echo.wat")
	v1, err := os.ReadFile(echo)
	if err != nil {
		t.Fatal(err)
	}
	v2 := append(append([]byte{}, v1...), variant(9)...)
	dir := t.TempDir()
	path := filepath.Join(dir, "echo.wasm")
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	g := &gate{ok: map[string]string{}}
	g.allow("echo.wasm", v1)
	live, err := loader.Open(ctx, newRuntime(t), dir, loader.Options{Admit: g.admit, AdmitFile: "toolhost.lock"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	if ch, _ := live.Rescan(ctx); len(ch.Errors) != 1 {
		t.Fatalf("v2 not refused: %+v", ch)
	}
	if ch, _ := live.Rescan(ctx); !ch.Empty() {
		t.Fatalf("an unchanged refusal reported again: %+v", ch)
	}
	g.allow("echo.wasm", v2)
	ch, err := live.Rescan(ctx)
	got, ok := live.Lookup("wat.echo")
	if err != nil || len(ch.Loaded) != 1 || !ok || got.Module.SHA256 != g.ok["echo.wasm"] {
		t.Fatalf("after the gate admits v2: %+v %v; serving %v", ch, err, ok)
	}
	if files := live.Files(); len(files) != 1 || files[0].State != loader.StateServing {
		t.Fatalf("files %+v, want echo.wasm serving alone", files)
	}
}
