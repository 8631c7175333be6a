package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGauge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# HELP toolhost_instances_in_flight x\ntoolhost_instances_in_flight_total 9\ntoolhost_instances_in_flight 3\n")
	}))
	defer srv.Close()
	if n, err := gauge(srv.URL, "toolhost_instances_in_flight"); err != nil || n != 3 {
		t.Errorf("gauge = %d, %v; want 3 (not the _total line)", n, err)
	}
	if _, err := gauge(srv.URL, "missing"); err == nil {
		t.Error("a missing gauge read as a value")
	}
}

func TestCompiling(t *testing.T) {
	for body, want := range map[string]bool{
		"ready; 2 modules compiling, 1 queued to (their calls wait for it)\n": true,
		"ready\n": false,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
		if busy, err := compiling(srv.URL); err != nil || busy != want {
			t.Errorf("compiling(%q) = %t, %v; want %t", body, busy, err, want)
		}
		srv.Close()
	}
}
