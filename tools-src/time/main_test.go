package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolhost/toolhost/abi/guest/abi"
	"github.com/toolhost/toolhost/tools-src/internal/tooltest"
)

func TestManifest(t *testing.T) {
	tooltest.CheckManifest(t, map[string]tooltest.Flags{
		"time.now":     {ReadOnly: true, TimeoutMS: 5000},
		"time.convert": {Idempotent: true, ReadOnly: true, TimeoutMS: 5000},
		"time.between": {Idempotent: true, ReadOnly: true, TimeoutMS: 5000},
	})
}

func TestNow(t *testing.T) {
	fixed := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	now = func() time.Time { return fixed }
	t.Cleanup(func() { now = time.Now })
	tooltest.Run(t, []tooltest.Case{
		{Name: "default UTC", Tool: "time.now", Args: `{}`,
			Want: `{"time":"2026-07-01T12:00:00Z","zone":"UTC","abbreviation":"UTC","utc_offset":"+00:00","offset_seconds":0,"dst":false,
				"date":"2026-07-01","clock":"12:00:00","weekday":"Wednesday","unix":1782907200,"unix_ms":1782907200000}`},
		{Name: "Paris in summer", Tool: "time.now", Args: `{"zone":"Europe/Paris"}`,
			Want: `{"time":"2026-07-01T14:00:00+02:00","zone":"Europe/Paris","abbreviation":"CEST","utc_offset":"+02:00","offset_seconds":7200,"dst":true,
				"date":"2026-07-01","clock":"14:00:00","weekday":"Wednesday","unix":1782907200,"unix_ms":1782907200000}`},
		{Name: "half-hour zone", Tool: "time.now", Args: `{"zone":"Asia/Kolkata"}`,
			Check: func(t *testing.T, r []byte) { wantField(t, r, "utc_offset", "+05:30") }},
		{Name: "unknown zone names it", Tool: "time.now", Args: `{"zone":"Europe/Pariss"}`,
			Kind: abi.KindSchema, Msg: `unknown time zone "Europe/Pariss"`},
		{Name: "local refused", Tool: "time.now", Args: `{"zone":"Local"}`, Kind: abi.KindSchema, Msg: "IANA zone"},
		{Name: "wrong case", Tool: "time.now", Args: `{"zone":"europe/paris"}`, Kind: abi.KindSchema, Msg: "case-sensitive"},
		{Name: "unknown property", Tool: "time.now", Args: `{"tz":"UTC"}`, Rejected: true},
	})
}

func TestConvert(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "offset to zone", Tool: "time.convert", Args: `{"time":"2026-01-15T09:30:00Z","to_zone":"America/New_York"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "to.time", "2026-01-15T04:30:00-05:00")
				wantField(t, r, "to.abbreviation", "EST")
				wantField(t, r, "from.zone", "UTC")
			}},
		{Name: "wall clock in from_zone", Tool: "time.convert", Args: `{"time":"2026-07-04 18:00","from_zone":"America/Los_Angeles","to_zone":"Asia/Tokyo"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "from.time", "2026-07-04T18:00:00-07:00")
				wantField(t, r, "to.time", "2026-07-05T10:00:00+09:00")
				wantField(t, r, "note", "")
			}},
		// Europe/Paris springs forward at 02:00 on 2026-03-29: 02:30 is
		// skipped and read as 03:30 CEST.
		{Name: "DST gap moves forward", Tool: "time.convert", Args: `{"time":"2026-03-29T02:30","from_zone":"Europe/Paris","to_zone":"UTC"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "from.time", "2026-03-29T03:30:00+02:00")
				wantField(t, r, "to.time", "2026-03-29T01:30:00Z")
				wantContains(t, r, "note", "does not exist in Europe/Paris")
			}},
		// And falls back at 03:00 on 2026-10-25: 02:30 happens twice.
		{Name: "DST overlap takes the earlier", Tool: "time.convert", Args: `{"time":"2026-10-25T02:30:00","from_zone":"Europe/Paris","to_zone":"UTC"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "from.time", "2026-10-25T02:30:00+02:00")
				wantField(t, r, "to.time", "2026-10-25T00:30:00Z")
				wantContains(t, r, "note", "happens twice")
			}},
		{Name: "just after the overlap is unambiguous", Tool: "time.convert", Args: `{"time":"2026-10-25T03:00:00","from_zone":"Europe/Paris","to_zone":"UTC"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "to.time", "2026-10-25T02:00:00Z")
				wantField(t, r, "note", "")
			}},
		{Name: "southern hemisphere DST", Tool: "time.convert", Args: `{"time":"2026-01-10T12:00:00Z","to_zone":"Australia/Sydney"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "to.abbreviation", "AEDT")
				wantField(t, r, "to.dst", true)
			}},
		{Name: "wall clock without a zone is refused", Tool: "time.convert", Args: `{"time":"2026-07-04 18:00","to_zone":"UTC"}`,
			Kind: abi.KindSchema, Msg: "has no UTC offset"},
		{Name: "bad to_zone named", Tool: "time.convert", Args: `{"time":"2026-07-04T18:00:00Z","to_zone":"Mars/Olympus"}`,
			Kind: abi.KindSchema, Msg: `to_zone: unknown time zone "Mars/Olympus"`},
		{Name: "bad from_zone named", Tool: "time.convert", Args: `{"time":"2026-07-04 18:00","from_zone":"CET+1","to_zone":"UTC"}`,
			Kind: abi.KindSchema, Msg: `from_zone: unknown time zone "CET+1"`},
		{Name: "not a time", Tool: "time.convert", Args: `{"time":"tomorrow","to_zone":"UTC"}`,
			Kind: abi.KindSchema, Msg: `"tomorrow" is not a time`},
		{Name: "missing to_zone", Tool: "time.convert", Args: `{"time":"2026-07-04T18:00:00Z"}`, Rejected: true},
	})
}

func TestBetween(t *testing.T) {
	tooltest.Run(t, []tooltest.Case{
		{Name: "plain", Tool: "time.between", Args: `{"start":"2026-01-01T00:00:00Z","end":"2026-01-02T02:03:04.5Z"}`,
			Want: `{"seconds":93784.5,"milliseconds":93784500,"duration":"26h3m4.5s","iso8601":"PT26H3M4.5S","calendar_days":1}`},
		{Name: "negative", Tool: "time.between", Args: `{"start":"2026-01-02T00:00:00Z","end":"2026-01-01T23:00:00Z"}`,
			Want: `{"seconds":-3600,"milliseconds":-3600000,"duration":"-1h0m0s","iso8601":"-PT1H","calendar_days":-1}`},
		// A calendar day across spring-forward in New York is 23 hours.
		{Name: "DST day is 23 hours", Tool: "time.between", Args: `{"start":"2026-03-08 00:00","end":"2026-03-09 00:00","zone":"America/New_York"}`,
			Check: func(t *testing.T, r []byte) {
				wantField(t, r, "duration", "23h0m0s")
				wantField(t, r, "calendar_days", float64(1))
			}},
		{Name: "zero", Tool: "time.between", Args: `{"start":"2026-01-01T00:00:00Z","end":"2026-01-01T01:00:00+01:00"}`,
			Check: func(t *testing.T, r []byte) { wantField(t, r, "iso8601", "PT0S") }},
		{Name: "bad zone", Tool: "time.between", Args: `{"start":"2026-01-01","end":"2026-01-02","zone":"Nowhere"}`,
			Kind: abi.KindSchema, Msg: `zone: unknown time zone "Nowhere"`},
	})
}

// wantField checks the value at a dotted path of the result.
func wantField(t *testing.T, r []byte, path string, want any) {
	t.Helper()
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	if v == nil && want == "" {
		return
	}
	if v != want {
		t.Errorf("%s = %v, want %v (in %s)", path, v, want, r)
	}
}

func wantContains(t *testing.T, r []byte, field, part string) {
	t.Helper()
	var m map[string]any
	_ = json.Unmarshal(r, &m)
	if s, _ := m[field].(string); !strings.Contains(s, part) {
		t.Errorf("%s = %q, want it to contain %q", field, s, part)
	}
}
