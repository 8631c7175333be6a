package main

import (
	"testing"
	"time"
)

func TestMedianAndPercentile(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Errorf("median odd = %v, want 2", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median even = %v, want 2.5", got)
	}
	lat := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if got := pct(lat, 0.5); got != 5 {
		t.Errorf("p50 = %v, want 5", got)
	}
	if got := pct(lat, 0.99); got != 9 {
		t.Errorf("p99 of 10 = %v, want 9 (nearest rank below)", got)
	}
	if got := pct(nil, 0.5); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

func TestParseLevels(t *testing.T) {
	got, err := parseLevels("1, 8,32")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 8 || got[2] != 32 {
		t.Errorf("parseLevels = %v, %v", got, err)
	}
	for _, bad := range []string{"0", "x", "1,,2"} {
		if _, err := parseLevels(bad); err == nil {
			t.Errorf("parseLevels(%q) accepted", bad)
		}
	}
}
