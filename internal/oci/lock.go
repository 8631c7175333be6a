package oci

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// LockFile is the lock file's name in a plugins folder.
const LockFile = "toolhost.lock"

// lockVersion is the lock format's version; a file of another version is
// refused rather than rewritten.
const lockVersion = 1

// Lock is a plugins folder's toolhost.lock: what each pulled module is,
// where it came from and which bytes were verified. It is JSON:
//
//	{
//	  "version": 1,
//	  "modules": [
//	    {
//	      "name": "echo.wasm",
//	      "reference": "oci://ghcr.io/acme/echo:v1",
//	      "digest": "sha256:…",
//	      "module_digest": "sha256:…",
//	      "signer": "https://github.com/acme/echo/.github/workflows/release.yml@refs/tags/v1",
//	      "issuer": "https://token.actions.githubusercontent.com",
//	      "signature": "bundle"
//	    }
//	  ]
//	}
//
// digest is the manifest's digest, what a re-pull fetches; module_digest
// is the sha256 of the file written; signer, issuer and signature say who
// signed and in which form (absent when verification was skipped).
// Modules are in name order. Write it through UpdateLock.
type Lock struct {
	Version int          `json:"version"`
	Modules []LockedFile `json:"modules"`
}

// LockedFile is one module of a Lock.
type LockedFile struct {
	// Name is the module's file name in the plugins folder.
	Name string `json:"name"`
	// Reference is the oci:// reference as it was pulled (a tag or a
	// digest).
	Reference string `json:"reference"`
	// Digest is the manifest digest the pull resolved: what it pins.
	Digest string `json:"digest"`
	// ModuleDigest is the sha256 of the module's bytes (sha256:HEX).
	ModuleDigest string `json:"module_digest"`
	// Signer is who signed the artifact, when a signature was verified:
	// the key's ID (sha256:HEX of its DER public key), or for a keyless
	// signature the certificate's subject (with Issuer).
	Signer string `json:"signer,omitempty"`
	// Issuer is the OIDC issuer of a keyless signer's certificate.
	Issuer string `json:"issuer,omitempty"`
	// Signature is the form that verified: "bundle" (a Sigstore bundle
	// among the referrers) or "sig-tag" (the sha256-HEX.sig tag).
	Signature string `json:"signature,omitempty"`
}

// lockSidecar is the file UpdateLock holds locked while it rewrites the
// lock file (the lock file itself is replaced by a rename, so it cannot
// carry the lock). Hidden and not .wasm: the loader never reads it.
const lockSidecar = ".toolhost.lock.flock"

// UpdateLock rewrites dir's lock file with change applied, holding an
// exclusive lock of a sidecar file from before it reads the lock file to
// after the new one is in place, so that two pulls into one folder at
// once each see the other's entries (without it, both read the same
// file and the second write drops the first's entry). Readers (serve's
// LockGate) take no lock: the file is replaced whole by a rename. It
// returns the lock as written.
func UpdateLock(dir string, change func(*Lock) error) (*Lock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockSidecar), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	defer unlockFile(f)
	l, err := ReadLock(dir)
	if err != nil {
		return nil, err
	}
	if err := change(l); err != nil {
		return nil, err
	}
	return l, l.Write(dir)
}

// Get returns the entry of name, if there is one.
func (l *Lock) Get(name string) (LockedFile, bool) {
	i := slices.IndexFunc(l.Modules, func(m LockedFile) bool { return m.Name == name })
	if i < 0 {
		return LockedFile{}, false
	}
	return l.Modules[i], true
}

// Delete removes the entry of name.
func (l *Lock) Delete(name string) {
	l.Modules = slices.DeleteFunc(l.Modules, func(o LockedFile) bool { return o.Name == name })
}

// ReadLock reads dir's lock file; a folder without one has an empty Lock.
func ReadLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: lockVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("%s: version %d, this toolhost reads version %d", path, l.Version, lockVersion)
	}
	for _, m := range l.Modules {
		if err := checkName(m.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if !validDigest(m.Digest) || !validDigest(m.ModuleDigest) {
			return nil, fmt.Errorf("%s: %s: digests must be sha256:<64 hex digits>", path, m.Name)
		}
	}
	return &l, nil
}

// Set records m, replacing the entry of the same name.
func (l *Lock) Set(m LockedFile) {
	l.Delete(m.Name)
	l.Modules = append(l.Modules, m)
	slices.SortFunc(l.Modules, func(a, b LockedFile) int { return strings.Compare(a.Name, b.Name) })
}

// NotSignedError says why a lock file does not vouch for a module file's
// bytes ([trust] require = "signed").
type NotSignedError struct {
	// Name is the module's file name; Why, what the lock file says of it.
	Name, Why string
}

func (e *NotSignedError) Error() string {
	return fmt.Sprintf("%s: %s; pull it with toolhost pull and a trusted key", e.Name, e.Why)
}

// Signed returns nil when l records the bytes of module file name whose
// sha256 is sum (hex) as pulled with a verified signature, and a
// *NotSignedError saying what it records otherwise.
func (l *Lock) Signed(name, sum string) error {
	i := slices.IndexFunc(l.Modules, func(m LockedFile) bool { return m.Name == name })
	if i < 0 {
		return &NotSignedError{name, "the lock file has no entry for it (copied into the folder by hand?)"}
	}
	m := l.Modules[i]
	if m.ModuleDigest != "sha256:"+sum {
		return &NotSignedError{name, fmt.Sprintf("its bytes (sha256:%s) are not the %s the lock file records for %s (changed after the pull?)",
			sum, m.ModuleDigest, m.Reference)}
	}
	if m.Signer == "" {
		return &NotSignedError{name, fmt.Sprintf("the lock file records %s as pulled without a verified signature (--insecure-skip-verify)", m.Reference)}
	}
	return nil
}

// LockGate is the trust gate of a plugins folder under [trust] require =
// "signed" (loader.Options.Admit): it reads dir's lock file on each
// question, as a pull may have written it since, and admits what Signed
// admits. A lock file that cannot be read admits nothing.
func LockGate(dir string) func(name, sum string) error {
	return func(name, sum string) error {
		l, err := ReadLock(dir)
		if err != nil {
			return fmt.Errorf("%s: the lock file cannot be read: %w", name, err)
		}
		return l.Signed(name, sum)
	}
}

// Write writes l into dir atomically.
func (l *Lock) Write(dir string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(dir, LockFile, append(b, '\n'))
}

// ModuleName is the file name a pulled module gets: the repository's last
// path element with .wasm (oci://ghcr.io/acme/echo:v1 gives echo.wasm).
func ModuleName(ref Reference) string {
	repo := ref.ref.Context().RepositoryStr()
	return repo[strings.LastIndex(repo, "/")+1:] + ".wasm"
}

func checkName(n string) error {
	if n == "" || n != filepath.Base(n) || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".wasm") {
		return fmt.Errorf("module name %q is not a file name ending in .wasm", n)
	}
	return nil
}

// WriteFileAtomic writes b to dir/name through a temporary file in dir
// and a rename, so that a watcher of dir (serve's hot reload) sees the
// whole file or none of it. The temporary file is hidden and does not end
// in .wasm, so the loader never reads it.
func WriteFileAtomic(dir, name string, b []byte) error {
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
