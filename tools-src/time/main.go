// Command time is a toolhost tool module for clocks and calendars: the
// current time in any IANA zone, conversion between zones, and the
// duration between two instants. The time zone database is embedded
// (time/tzdata): a sandboxed guest has no /usr/share/zoneinfo. Build it as
// a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugins/time.wasm ./tools-src/time
package main

import (
	"time"
	_ "time/tzdata"

	"github.com/toolhost/toolhost/abi/guest"
	"github.com/toolhost/toolhost/abi/guest/abi"
)

// now is the clock time.now reads; tests replace it.
var now = time.Now

func init() {
	guest.Register("time.now", guest.Options{
		Title: "Current time",
		Description: "The current date and time in a time zone given by its IANA name (Europe/Paris, " +
			"America/New_York, Asia/Tokyo; default UTC): the RFC 3339 timestamp with its offset, the zone's " +
			"abbreviation and UTC offset, whether daylight saving time is in effect, the weekday, and Unix time.",
		ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse,
	}, nowTool)
	guest.Register("time.convert", guest.Options{
		Title: "Convert a time between zones",
		Description: "Converts a date and time to another time zone. time is RFC 3339 with an offset " +
			"(2026-03-29T01:30:00Z, 2026-03-29T03:30:00+02:00) or a wall-clock time without one " +
			"(2026-03-29T02:30, 2026-03-29 02:30:00), which is then read in from_zone (required for it). " +
			"A wall-clock time that a daylight saving change skips is moved forward by the gap, and one " +
			"that happens twice takes the earlier; note says so.",
		Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse,
	}, convert)
	guest.Register("time.between", guest.Options{
		Title: "Time between two instants",
		Description: "The duration from start to end (negative when end is earlier), in seconds, as Go " +
			"and ISO 8601 durations, and in calendar days of zone (default UTC) — calendar days differ from " +
			"24-hour days across daylight saving changes. start and end take the forms time.convert takes; " +
			"wall-clock times are read in zone.",
		Idempotent: true, ReadOnly: true, TimeoutMS: 5000, Instances: abi.InstancesReuse,
	}, between)
}

func main() {}

type nowArgs struct {
	Zone string `json:"zone,omitempty" jsonschema:"description=IANA time zone name such as Europe/Paris; default UTC,maxLength=64"`
}

func nowTool(a nowArgs) (instant, error) {
	loc, err := zone(a.Zone, "zone")
	if err != nil {
		return instant{}, err
	}
	return describe(now().In(loc)), nil
}

type convertArgs struct {
	Time     string `json:"time" jsonschema:"description=RFC 3339 time with offset or a wall-clock time read in from_zone,minLength=1,maxLength=64"`
	FromZone string `json:"from_zone,omitempty" jsonschema:"description=IANA zone a wall-clock time is read in,maxLength=64"`
	ToZone   string `json:"to_zone" jsonschema:"description=IANA zone to convert to,minLength=1,maxLength=64"`
}

type converted struct {
	From instant `json:"from"`
	To   instant `json:"to"`
	Note string  `json:"note,omitempty" jsonschema:"description=set when a daylight saving change made the wall-clock time skipped or ambiguous"`
}

func convert(a convertArgs) (converted, error) {
	from, err := zone(a.FromZone, "from_zone")
	if err != nil {
		return converted{}, err
	}
	to, err := zone(a.ToZone, "to_zone")
	if err != nil {
		return converted{}, err
	}
	t, note, err := parse(a.Time, "time", from, a.FromZone != "")
	if err != nil {
		return converted{}, err
	}
	return converted{From: describe(t), To: describe(t.In(to)), Note: note}, nil
}

type betweenArgs struct {
	Start string `json:"start" jsonschema:"description=the earlier instant (RFC 3339 or wall-clock in zone),minLength=1,maxLength=64"`
	End   string `json:"end" jsonschema:"description=the later instant (RFC 3339 or wall-clock in zone),minLength=1,maxLength=64"`
	Zone  string `json:"zone,omitempty" jsonschema:"description=IANA zone for wall-clock times and calendar days; default UTC,maxLength=64"`
}

type span struct {
	Seconds      float64  `json:"seconds"`
	Milliseconds int64    `json:"milliseconds"`
	Duration     string   `json:"duration" jsonschema:"description=Go duration such as 26h3m0s"`
	ISO8601      string   `json:"iso8601" jsonschema:"description=ISO 8601 duration in hours minutes and seconds such as PT26H3M"`
	CalendarDays int      `json:"calendar_days" jsonschema:"description=midnights of zone crossed from start to end (negative when end is earlier)"`
	Notes        []string `json:"notes,omitempty"`
}

func between(a betweenArgs) (span, error) {
	loc, err := zone(a.Zone, "zone")
	if err != nil {
		return span{}, err
	}
	start, n1, err := parse(a.Start, "start", loc, true)
	if err != nil {
		return span{}, err
	}
	end, n2, err := parse(a.End, "end", loc, true)
	if err != nil {
		return span{}, err
	}
	d := end.Sub(start)
	s := span{
		Seconds:      d.Seconds(),
		Milliseconds: d.Milliseconds(),
		Duration:     d.String(),
		ISO8601:      iso8601(d),
		CalendarDays: calendarDays(start.In(loc), end.In(loc)),
	}
	for _, n := range []string{n1, n2} {
		if n != "" {
			s.Notes = append(s.Notes, n)
		}
	}
	return s, nil
}
