package transport

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolhost/toolhost/plan"
)

// encodeBounded encodes a session result of at most max bytes (0: no
// bound). The session holds at most max bytes of arguments and results,
// but its result repeats them (in the event log, the revisions and the
// history), so a result over max leaves out those copies, in that order,
// until it fits, and says so in its message. The progress notifications
// carry every event.
func encodeBounded(res *plan.SessionResult, max int) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil || max <= 0 || len(b) <= max {
		return b, err
	}
	full, msg := len(b), res.Message
	var left []string
	for _, drop := range []struct {
		name string
		do   func()
	}{
		{"events", func() { res.Events = nil }},
		{"revisions", func() { res.Revisions = nil }},
		{"history", func() { res.History = nil }},
	} {
		drop.do()
		left = append(left, drop.name)
		res.Message = fmt.Sprintf("%s [the result was %d bytes, over this server's limit of %d: %s left out; progress notifications carry every event]",
			msg, full, max, strings.Join(left, ", "))
		if b, err = json.Marshal(res); err != nil || len(b) <= max {
			return b, err
		}
	}
	return b, err
}
