package idempotency

import "time"

// expiryTimer is the one timer a table keeps for its oldest entry: set
// moves it to that entry's expiry, and the table's expire callback evicts
// what has expired and sets it again. The zero value is stopped; the
// table's lock guards it.
type expiryTimer struct {
	timer *time.Timer
	at    time.Time // when timer fires; zero when stopped or fired
}

// set makes the timer call fire at at (now is the table's clock),
// unless it is already set for that time.
func (e *expiryTimer) set(at, now time.Time, fire func()) {
	if at.Equal(e.at) {
		return
	}
	e.at = at
	if e.timer == nil {
		e.timer = time.AfterFunc(at.Sub(now), fire)
		return
	}
	e.timer.Reset(at.Sub(now))
}

// fired records that the timer went off: the next set arms it even for
// the time it fired at.
func (e *expiryTimer) fired() { e.at = time.Time{} }
