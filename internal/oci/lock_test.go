package oci

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLockRoundTripAndRefusals(t *testing.T) {
	dir := t.TempDir()
	l, err := ReadLock(dir)
	if err != nil || len(l.Modules) != 0 {
		t.Fatalf("empty folder: %v %+v", err, l)
	}
	d := "sha256:" + strings.Repeat("a", 64)
	l.Set(LockedFile{Name: "web.wasm", Reference: "oci://r.example/web:v1", Digest: d, ModuleDigest: d})
	l.Set(LockedFile{Name: "echo.wasm", Reference: "oci://r.example/echo:v1", Digest: d, ModuleDigest: d})
	l.Set(LockedFile{Name: "web.wasm", Reference: "oci://r.example/web:v2", Digest: d, ModuleDigest: d})
	if err := l.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Modules) != 2 || back.Modules[0].Name != "echo.wasm" || back.Modules[1].Reference != "oci://r.example/web:v2" {
		t.Fatalf("read back %+v", back.Modules)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d entries in the folder, want the lock alone (no temporary file left)", len(entries))
	}
	for name, body := range map[string]string{
		"other version": `{"version": 2, "modules": []}`,
		"unknown key":   `{"version": 1, "modules": [], "extra": 1}`,
		"path as name":  `{"version": 1, "modules": [{"name": "../x.wasm", "reference": "oci://r/x", "digest": "` + d + `", "module_digest": "` + d + `"}]}`,
		"hidden name":   `{"version": 1, "modules": [{"name": ".x.wasm", "reference": "oci://r/x", "digest": "` + d + `", "module_digest": "` + d + `"}]}`,
		"bad digest":    `{"version": 1, "modules": [{"name": "x.wasm", "reference": "oci://r/x", "digest": "sha256:zz", "module_digest": "` + d + `"}]}`,
		"not JSON":      `version = 1`,
	} {
		if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLock(dir); err == nil {
			t.Errorf("%s: read without error", name)
		}
	}
}

// The lock gate admits a file whose bytes the lock records as pulled with
// a verified signature, and says what it records otherwise; an unreadable
// lock admits nothing.
func TestLockGate(t *testing.T) {
	dir := t.TempDir()
	sum := strings.Repeat("b", 64)
	l, _ := ReadLock(dir)
	l.Set(LockedFile{Name: "echo.wasm", Reference: "oci://r/echo:v1", Digest: "sha256:" + sum, ModuleDigest: "sha256:" + sum, Signer: "key SHA256:abc"})
	l.Set(LockedFile{Name: "raw.wasm", Reference: "oci://r/raw:v1", Digest: "sha256:" + sum, ModuleDigest: "sha256:" + sum})
	if err := l.Write(dir); err != nil {
		t.Fatal(err)
	}
	gate := LockGate(dir)
	if err := gate("echo.wasm", sum); err != nil {
		t.Errorf("signed, recorded bytes: %v", err)
	}
	for _, tc := range []struct{ name, sum, want string }{
		{"echo.wasm", strings.Repeat("c", 64), "changed after the pull"},
		{"raw.wasm", sum, "without a verified signature"},
		{"copied.wasm", sum, "no entry for it"},
	} {
		var ns *NotSignedError
		if err := gate(tc.name, tc.sum); !errors.As(err, &ns) || ns.Name != tc.name || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a NotSignedError saying %q", tc.name, err, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, LockFile), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := gate("echo.wasm", sum); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("an unreadable lock file: %v, want a refusal", err)
	}
}

// Two writers updating one folder's lock at once (two toolhost pulls)
// keep every entry: each update re-reads the file under the sidecar's
// flock. Without the lock, both read the same file and one write drops
// the other's entries.
func TestUpdateLockConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const writers, each = 2, 40
	d := "sha256:" + strings.Repeat("c", 64)
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				_, err := UpdateLock(dir, func(l *Lock) error {
					l.Set(LockedFile{Name: fmt.Sprintf("w%d-%d.wasm", w, i), Reference: "oci://r/x:v1", Digest: d, ModuleDigest: d})
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	l, err := ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Modules) != writers*each {
		t.Fatalf("%d entries, want %d: concurrent updates lost some", len(l.Modules), writers*each)
	}
}
