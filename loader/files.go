package loader

import (
	"cmp"
	"slices"

	"github.com/toolhost/toolhost/host"
)

// States a module file can be in (FileState.State).
const (
	// StateCompiling is a file not listed yet: it compiles to be listed
	// (or refused).
	StateCompiling = "compiling"
	// StateServing is a file whose tools are listed. Its code may still
	// be compiling (FileState.Compiled false): calls wait for it.
	StateServing = "serving"
	// StateRefused is a file that does not load; Reason says why, as
	// `toolhost inspect` would. An older version of it may be serving
	// (a second FileState for the same path).
	StateRefused = "refused"
)

// FileState is what the folder does with one module file.
type FileState struct {
	Path  string `json:"path"`
	State string `json:"state"`
	// SHA256 is the version: the sha256 of the file's bytes (for a
	// refused file, of the bytes refused; empty for a file that is not a
	// module at all).
	SHA256 string   `json:"sha256,omitempty"`
	Tools  []string `json:"tools,omitempty"`
	// Compiled says whether a serving module's code is in memory; false
	// while it compiles in the background or after it was released.
	Compiled bool `json:"compiled,omitempty"`
	// Verifying says the module was listed from its toolhost.manifest
	// section, which is checked when its code has compiled.
	Verifying bool   `json:"verifying,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Files says, for every module file of the folder as the last rescan saw
// it, whether it is compiling, serving (with its version) or refused (with
// the reason), by path.
func (l *Live) Files() []FileState {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []FileState
	for p, f := range l.files {
		st := FileState{Path: p, State: StateServing, SHA256: f.sha}
		if m, ok := f.ref.mod.(*host.Module); ok {
			st.Compiled, st.Verifying = m.Resident(), m.Unverified()
		}
		for _, r := range f.recs {
			st.Tools = append(st.Tools, r.Name)
		}
		out = append(out, st)
	}
	compiling := map[string]string{}
	if l.bg != nil {
		for p, sha := range l.bg.pending {
			compiling[p] = sha
		}
	}
	for p, sha := range l.loading {
		compiling[p] = sha
	}
	for p, sha := range compiling {
		out = append(out, FileState{Path: p, State: StateCompiling, SHA256: sha})
	}
	for p, sha := range l.rejected {
		if _, ok := compiling[p]; ok {
			continue // refused bytes replaced by ones compiling now
		}
		if _, ok := l.stamps[p]; !ok {
			continue
		}
		st := FileState{Path: p, State: StateRefused, SHA256: sha, Reason: l.reasons[p]}
		if len(sha) != 64 {
			st.SHA256 = "" // not a module file: no bytes to name
		}
		out = append(out, st)
	}
	for p, sha := range l.untrusted {
		if _, ok := compiling[p]; !ok {
			out = append(out, FileState{Path: p, State: StateRefused, SHA256: sha, Reason: l.reasons[p]})
		}
	}
	slices.SortFunc(out, func(a, b FileState) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.State, b.State))
	})
	return out
}
