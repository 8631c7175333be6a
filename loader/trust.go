package loader

import (
	"path/filepath"

	"github.com/toolhost/toolhost/host"
)

// UntrustedError is a module file the trust gate (Options.Admit) refused:
// its bytes do not load until the gate admits them. Unlike a module that
// fails to load, the gate is asked again on every rescan, since its answer
// can change without the file changing (a pull that records the file's
// digest in the lock file).
type UntrustedError struct {
	Path string
	// Err is the gate's reason.
	Err error
}

func (e *UntrustedError) Error() string { return e.Err.Error() }

// Unwrap returns the gate's reason.
func (e *UntrustedError) Unwrap() error { return e.Err }

// trusted asks the gate about bytes sha of p; a refusal is recorded as p's
// state (Files) and reported in ch once per bytes. No gate admits all.
func (l *Live) trusted(p, sha string, ch *Change) bool {
	if l.opts.Admit == nil {
		return true
	}
	err := l.opts.Admit(filepath.Base(p), sha)
	if err == nil {
		delete(l.untrusted, p)
		return true
	}
	if l.untrusted[p] != sha {
		ue := &UntrustedError{Path: p, Err: err}
		ch.Errors = append(ch.Errors, &host.LoadError{Path: p, Reason: "not trusted: " + err.Error(), Err: ue})
	}
	l.untrusted[p], l.reasons[p] = sha, "not trusted: "+err.Error()
	return false
}

// stillUntrusted asks the gate again about the unchanged bytes sha of p
// that it refused: true when it still refuses them (its reason kept up to
// date, nothing reported again).
func (l *Live) stillUntrusted(p, sha string) bool {
	err := l.opts.Admit(filepath.Base(p), sha)
	if err == nil {
		return false
	}
	l.reasons[p] = "not trusted: " + err.Error()
	return true
}

// forgetUntrusted drops the gate's refusals of files no longer in the
// folder (stamps: the files the rescan saw).
func (l *Live) forgetUntrusted(stamps map[string]stamp) {
	for p := range l.untrusted {
		if _, ok := stamps[p]; !ok {
			delete(l.untrusted, p)
			if _, still := l.rejected[p]; !still {
				delete(l.reasons, p)
			}
		}
	}
}

// watchedName reports whether a change to the folder's file name may
// change what the loader serves: a module file, or the gate's own file.
func (l *Live) watchedName(name string) bool {
	return filepath.Ext(name) == ".wasm" || (l.opts.AdmitFile != "" && filepath.Base(name) == l.opts.AdmitFile)
}
