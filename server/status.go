package server

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"

	"github.com/toolhost/toolhost/internal/config"
	"github.com/toolhost/toolhost/host"
	"github.com/toolhost/toolhost/loader"
)

// StatusReport is what GET /status answers and `toolhost status` prints:
// the server, and what it does with every file of its plugins folder.
type StatusReport struct {
	Version    string   `json:"version"`
	Transports []string `json:"transports"`
	Plugins    string   `json:"plugins"`
	// Starting is /readyz's progress note while modules present at start
	// are not all listed; empty after.
	Starting string             `json:"starting,omitempty"`
	Cache    StatusCache        `json:"cache"`
	Grants   []StatusGrant      `json:"grants"`
	Modules  []loader.FileState `json:"modules"`
}

// StatusCache is the compilation and describe cache in a StatusReport.
type StatusCache struct {
	// Dir is the compilation and describe cache folder; empty: none.
	Dir string `json:"dir"`
	// Entries is how many compiled modules the cache holds.
	Entries int `json:"entries"`
	// Hits and Misses count module loads since the start that the cache
	// served and those it had to compile.
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
	// Compiling and Resident are the runtime's modules compiling now and
	// with code in memory.
	Compiling int64 `json:"compiling"`
	Resident  int   `json:"resident"`
}

// StatusGrant is one egress grant, without the header values it injects
// (secrets): their names only.
type StatusGrant struct {
	Module  string   `json:"module"`
	Hosts   []string `json:"hosts"`
	Methods []string `json:"methods,omitempty"`
	Schemes []string `json:"schemes,omitempty"`
	Headers []string `json:"injected_headers,omitempty"`
}

// statusSource is what a server reports from.
type statusSource struct {
	version    string
	plugins    string
	transports []string
	cfg        *config.Config
	rt         *host.Runtime
	live       *loader.Live
}

func (s *statusSource) report() StatusReport {
	r := StatusReport{Version: s.version, Transports: s.transports, Plugins: s.plugins, Starting: s.live.StartingNote(),
		Grants: []StatusGrant{}, Modules: s.live.Files()}
	r.Cache.Dir = s.rt.CacheDir()
	r.Cache.Entries, _ = s.rt.CacheEntries()
	r.Cache.Hits, r.Cache.Misses = s.live.CacheStats()
	st := s.rt.ModuleStats()
	r.Cache.Compiling, r.Cache.Resident = st.Compiling, st.Resident
	grants := s.cfg.EgressGrants()
	for _, name := range slices.Sorted(maps.Keys(grants)) {
		g := grants[name]
		sg := StatusGrant{Module: name, Hosts: g.Hosts, Methods: g.Methods, Schemes: g.Schemes}
		for _, hs := range g.Headers {
			for h := range hs {
				if !slices.Contains(sg.Headers, h) {
					sg.Headers = append(sg.Headers, h)
				}
			}
		}
		slices.Sort(sg.Headers)
		r.Grants = append(r.Grants, sg)
	}
	if r.Modules == nil {
		r.Modules = []loader.FileState{}
	}
	return r
}

// handler answers GET /status (behind the same authentication as /mcp).
func (s *statusSource) handler() http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(s.report())
	}
}
