package main

import (
	"context"
	"fmt"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// maxPrimesBelow keeps a segment and the base primes well inside the
// module's memory.
const maxPrimesBelow = 20_000_000

// primesSegments is how many pieces the range is sieved in: one progress
// report each.
const primesSegments = 20

type primesArgs struct {
	Below int `json:"below" jsonschema:"minimum=2,maximum=20000000,description=count the primes less than this number"`
}

type primesResult struct {
	Count   int `json:"count" jsonschema:"description=how many primes are less than below"`
	Largest int `json:"largest" jsonschema:"description=the largest of them (0 when there is none)"`
}

// primes counts the primes below a.Below with a segmented sieve of
// Eratosthenes, reporting progress after each segment: it is the example
// of a tool that tells its caller how far it has got.
func primes(ctx context.Context, a primesArgs) (primesResult, error) {
	n := a.Below
	if n < 2 || n > maxPrimesBelow {
		return primesResult{}, guest.Schemaf("below must be between 2 and %d, not %d", maxPrimesBelow, n)
	}
	root := 1
	for (root+1)*(root+1) < n {
		root++
	}
	base := smallPrimes(root)
	seg := max((n-2+primesSegments-1)/primesSegments, 1)
	composite := make([]bool, seg)
	var r primesResult
	for lo := 2; lo < n; lo += seg {
		hi := min(lo+seg, n)
		clear(composite)
		for _, p := range base {
			if p*p >= hi {
				break
			}
			for m := max(p*p, (lo+p-1)/p*p); m < hi; m += p {
				composite[m-lo] = true
			}
		}
		for i := lo; i < hi; i++ {
			if !composite[i-lo] {
				r.Count++
				r.Largest = i
			}
		}
		guest.Progress(ctx, float64(hi), float64(n), fmt.Sprintf("%d primes below %d", r.Count, hi))
	}
	guest.Log(ctx, abi.LogInfo, fmt.Sprintf("sieved %d numbers in segments of %d with %d base primes", n-2, seg, len(base)))
	return r, nil
}

// smallPrimes returns the primes up to and including n.
func smallPrimes(n int) []int {
	composite := make([]bool, n+1)
	var ps []int
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		ps = append(ps, i)
		for m := i * i; m <= n; m += i {
			composite[m] = true
		}
	}
	return ps
}
