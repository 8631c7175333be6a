package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolhost/toolhost/dispatcher"
	"github.com/toolhost/toolhost/transport"
)

// soakOp is one kind of call in the soak's mix: what to send, and which
// outcomes are right for it. Anything else is a failure of the server.
type soakOp struct {
	name   string
	weight int
	fault  string // the fault it injects, "" for none
	// call builds the request for the i-th call of this op (id is unique
	// per call).
	call func(id string, i int64) (tool string, args map[string]any, meta mcp.Meta)
	// ok says whether a successful result is right (result is its text).
	ok func(id, result string) bool
	// kinds are the error kinds that are right for it.
	kinds []dispatcher.Kind
}

// soakMix: cheap and expensive calls that must succeed, and three injected
// faults: transient failures (a coin that fails 30% of the time, retried;
// a tool that always fails, which trips its breaker), and timeouts (a
// sleep far past its 50 ms timeout). nonce runs under idempotency keys
// shared by groups of four calls.
func soakMix(run string) []soakOp {
	same := func(id, result string) bool { return result == fmt.Sprintf("%q", id) }
	return []soakOp{
		{name: "wat.echo", weight: 25,
			call: func(id string, _ int64) (string, map[string]any, mcp.Meta) {
				return "wat.echo", map[string]any{"id": id}, nil
			},
			ok: func(id, r string) bool { return r == fmt.Sprintf(`{"id":%q}`, id) }},
		{name: "echo (Go guest)", weight: 15,
			call: func(id string, _ int64) (string, map[string]any, mcp.Meta) {
				return "echo", map[string]any{"text": id}, nil
			},
			ok: func(id, r string) bool { return r == fmt.Sprintf(`{"text":%q}`, id) }},
		{name: "guest.coin", weight: 15, fault: "transient (30%, retried)",
			call: func(id string, _ int64) (string, map[string]any, mcp.Meta) {
				return "guest.coin", map[string]any{"percent": 30, "id": id}, nil
			},
			ok: same, kinds: []dispatcher.Kind{dispatcher.KindTransient, dispatcher.KindCircuitOpen}},
		{name: "flaky", weight: 10, fault: "transient (always) and breaker trips",
			call: func(string, int64) (string, map[string]any, mcp.Meta) {
				return "flaky", map[string]any{"fail": true}, nil
			},
			kinds: []dispatcher.Kind{dispatcher.KindTransient, dispatcher.KindCircuitOpen}},
		{name: "sleep past timeout", weight: 10, fault: "timeout (5 s sleep, 50 ms timeout)",
			call: func(string, int64) (string, map[string]any, mcp.Meta) {
				return "sleep", map[string]any{"ms": 5000}, mcp.Meta{transport.MetaTimeoutMS: 50}
			},
			kinds: []dispatcher.Kind{dispatcher.KindTimeout}},
		{name: "sleep 20 ms", weight: 10,
			call: func(string, int64) (string, map[string]any, mcp.Meta) {
				return "sleep", map[string]any{"ms": 20}, nil
			},
			ok: func(_, r string) bool { return r == `"slept"` }},
		{name: "nonce (keyed)", weight: 15,
			call: func(_ string, i int64) (string, map[string]any, mcp.Meta) {
				return "nonce", map[string]any{}, mcp.Meta{transport.MetaIdempotencyKey: fmt.Sprintf("soak-%s-%d", run, i/4)}
			},
			ok: func(_, r string) bool { return len(r) == 34 }},
	}
}

// soakStats is what the load saw, per op. Safe for concurrent use.
type soakStats struct {
	mu         sync.Mutex
	perOp      map[string]*opStats
	requestIDs map[string]int // request id in _meta -> responses carrying it
	nonces     map[string]map[string]bool
	lost       int // calls that got no response (a protocol or transport error)
	wrong      []string
	sent       atomic.Int64
}

type opStats struct {
	calls     int
	outcomes  map[string]int
	latencies []time.Duration
}

func newSoakStats() *soakStats {
	return &soakStats{perOp: map[string]*opStats{}, requestIDs: map[string]int{}, nonces: map[string]map[string]bool{}}
}

// runCall makes one call and records what came back.
func (s *soakStats) runCall(cs *mcp.ClientSession, op soakOp, id string, i int64) {
	tool, args, meta := op.call(id, i)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.sent.Add(1)
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: meta})
	took := time.Since(start)

	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.perOp[op.name]
	if st == nil {
		st = &opStats{outcomes: map[string]int{}}
		s.perOp[op.name] = st
	}
	st.calls++
	st.latencies = append(st.latencies, took)
	if err != nil {
		s.lost++
		s.wrong = append(s.wrong, fmt.Sprintf("%s %s: no response: %v", op.name, id, err))
		return
	}
	if rid, _ := res.Meta[transport.MetaRequestID].(string); rid != "" {
		s.requestIDs[rid]++
	} else {
		s.wrong = append(s.wrong, fmt.Sprintf("%s %s: a response without a request id", op.name, id))
	}
	if res.IsError {
		b, _ := json.Marshal(res.Meta[transport.MetaError])
		var de dispatcher.DispatchError
		_ = json.Unmarshal(b, &de)
		st.outcomes[string(de.Kind)]++
		if !slices.Contains(op.kinds, de.Kind) {
			s.wrong = append(s.wrong, fmt.Sprintf("%s %s: %s: %s", op.name, id, de.Kind, de.Message))
		}
		return
	}
	st.outcomes["ok"]++
	text := ""
	if len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	if op.ok == nil || !op.ok(id, text) {
		s.wrong = append(s.wrong, fmt.Sprintf("%s %s: unexpected result %.200s", op.name, id, text))
		return
	}
	if key, _ := meta[transport.MetaIdempotencyKey].(string); key != "" {
		if s.nonces[key] == nil {
			s.nonces[key] = map[string]bool{}
		}
		s.nonces[key][text] = true
	}
}

// load runs workers until the deadline, each on one of the sessions,
// picking ops by weight from a seeded generator (deterministic per worker).
func (s *soakStats) load(sessions []*mcp.ClientSession, mix []soakOp, workers int, until time.Time) {
	total := 0
	for _, op := range mix {
		total += op.weight
	}
	seqs := make([]atomic.Int64, len(mix)) // call number per op: keyed calls group by it
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 0x50a6))
			cs := sessions[w%len(sessions)]
			for n := 0; time.Now().Before(until); n++ {
				pick, i := rnd.IntN(total), 0
				for pick >= mix[i].weight {
					pick -= mix[i].weight
					i++
				}
				s.runCall(cs, mix[i], fmt.Sprintf("w%d-%d", w, n), seqs[i].Add(1)-1)
			}
		})
	}
	wg.Wait()
}

// duplicated counts the request ids seen on more than one response, and
// keys whose calls saw more than one nonce (an execution repeated).
func (s *soakStats) duplicated() (ids, keys int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.duplicatedLocked()
}

func (s *soakStats) duplicatedLocked() (ids, keys int) {
	for _, n := range s.requestIDs {
		if n > 1 {
			ids++
		}
	}
	seen := map[string]string{}
	for key, ns := range s.nonces {
		if len(ns) > 1 {
			keys++
		}
		for n := range ns {
			if other, ok := seen[n]; ok && other != key {
				keys++ // one execution's nonce under two keys
			}
			seen[n] = key
		}
	}
	return ids, keys
}

// percentile returns the p-th percentile (0 < p <= 100) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
