package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/toolhost/toolhost/abi/guest"
)

// instant is one moment as a clock in one zone shows it.
type instant struct {
	Time          string `json:"time" jsonschema:"description=RFC 3339 with the zone's offset"`
	Zone          string `json:"zone"`
	Abbreviation  string `json:"abbreviation" jsonschema:"description=such as CET or EDT; some zones have only a numeric one"`
	UTCOffset     string `json:"utc_offset" jsonschema:"description=such as +02:00"`
	OffsetSeconds int    `json:"offset_seconds"`
	DST           bool   `json:"dst" jsonschema:"description=daylight saving time in effect"`
	Date          string `json:"date" jsonschema:"description=YYYY-MM-DD"`
	Clock         string `json:"clock" jsonschema:"description=HH:MM:SS"`
	Weekday       string `json:"weekday"`
	Unix          int64  `json:"unix" jsonschema:"description=seconds since 1970-01-01T00:00:00Z"`
	UnixMS        int64  `json:"unix_ms"`
}

func describe(t time.Time) instant {
	abbr, off := t.Zone()
	return instant{
		Time:          t.Format(time.RFC3339Nano),
		Zone:          t.Location().String(),
		Abbreviation:  abbr,
		UTCOffset:     t.Format("-07:00"),
		OffsetSeconds: off,
		DST:           t.IsDST(),
		Date:          t.Format(time.DateOnly),
		Clock:         t.Format(time.TimeOnly),
		Weekday:       t.Weekday().String(),
		Unix:          t.Unix(),
		UnixMS:        t.UnixMilli(),
	}
}

// zone loads an IANA zone; empty is UTC. "Local" is refused: a sandbox's
// local zone is UTC whatever the caller's is, which would mislead.
func zone(name, field string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, guest.Schemaf("%s: %q is not usable here (the tool runs in a sandbox whose local zone means nothing to you): name an IANA zone such as Europe/Paris", field, name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, guest.Schemaf("%s: unknown time zone %q: use an IANA name such as Europe/Paris, America/New_York, Asia/Kolkata or UTC (names are case-sensitive)", field, name)
	}
	return loc, nil
}

// wallLayouts are the accepted forms of a time without an offset.
var wallLayouts = []string{
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05", "2006-01-02 15:04",
	"2006-01-02",
}

// parse reads s as RFC 3339, else as a wall-clock time in loc (allowed
// only when the caller named the zone, so that a missing offset is never
// silently read as UTC). The note explains a daylight saving adjustment.
func parse(s, field string, loc *time.Location, wallOK bool) (time.Time, string, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, "", nil
	}
	for _, layout := range wallLayouts {
		w, err := time.Parse(layout, s)
		if err != nil {
			continue
		}
		if !wallOK {
			return time.Time{}, "", guest.Schemaf("%s: %q has no UTC offset: add one (%sZ or %s+02:00) or give from_zone to read it in", field, s, s, s)
		}
		t, note := wall(w, loc)
		if note != "" {
			note = field + ": " + note
		}
		return t, note, nil
	}
	return time.Time{}, "", guest.Schemaf("%s: %q is not a time: use RFC 3339 (2026-03-29T01:30:00Z) or a wall-clock time (2026-03-29T02:30 or 2026-03-29 02:30:00)", field, s)
}

// wall places the wall-clock reading w (parsed as UTC) in loc. Go's
// time.Date leaves the choice open when the reading is skipped or repeated
// by a daylight saving change; this fixes it the way RFC 5545 and
// JavaScript's Temporal ("compatible") do: a skipped reading moves forward
// by the gap, a repeated one takes the earlier instant.
func wall(w time.Time, loc *time.Location) (time.Time, string) {
	y, mo, d := w.Date()
	h, mi, s := w.Clock()
	ns := w.Nanosecond()
	// The instants that could show this reading: the reading taken as
	// UTC, shifted by each offset in force around it.
	naive := time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	var matches []time.Time
	seen := map[int]bool{}
	for _, probe := range []time.Duration{-36 * time.Hour, 0, 36 * time.Hour} {
		_, off := naive.Add(probe).In(loc).Zone()
		if seen[off] {
			continue
		}
		seen[off] = true
		t := naive.Add(-time.Duration(off) * time.Second).In(loc)
		if _, o := t.Zone(); o == off {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], ""
	case 0:
		// Skipped: read it with the offset before the change, which lands
		// after the gap by as much as the reading was into it.
		_, before := naive.Add(-36 * time.Hour).In(loc).Zone()
		t := naive.Add(-time.Duration(before) * time.Second).In(loc)
		return t, fmt.Sprintf("%s does not exist in %s (a daylight saving change skips it); read as %s",
			w.Format("2006-01-02 15:04:05"), loc, t.Format(time.RFC3339))
	default:
		first := matches[0]
		for _, m := range matches[1:] {
			if m.Before(first) {
				first = m
			}
		}
		return first, fmt.Sprintf("%s happens twice in %s (a daylight saving change repeats it); took the earlier, %s",
			w.Format("2006-01-02 15:04:05"), loc, first.Format(time.RFC3339))
	}
}

// iso8601 writes d as PTnHnMnS (hours, not days: a day is not always 24
// hours), with a leading minus when negative.
func iso8601(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d == 0 {
		return "PT0S"
	}
	h := d / time.Hour
	m := (d % time.Hour) / time.Minute
	s := d % time.Minute
	var b strings.Builder
	b.WriteString(sign + "PT")
	if h > 0 {
		fmt.Fprintf(&b, "%dH", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dM", m)
	}
	if s > 0 {
		secs := fmt.Sprintf("%.9f", s.Seconds())
		secs = strings.TrimRight(strings.TrimRight(secs, "0"), ".")
		b.WriteString(secs + "S")
	}
	return b.String()
}

// calendarDays counts the dates between start and end in their zone.
func calendarDays(start, end time.Time) int {
	day := func(t time.Time) int64 {
		y, m, d := t.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
	}
	return int(day(end) - day(start))
}
