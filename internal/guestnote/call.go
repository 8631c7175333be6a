package guestnote

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/toolhost/toolhost/abi"
)

// Config makes a Call. Every field may be left zero.
type Config struct {
	// Sink receives the accepted notes; nil means they reach only the
	// server log.
	Sink Sink
	// Logger receives every accepted log message, and a summary of what
	// was dropped, truncated or invalid; nil means slog.Default.
	Logger *slog.Logger
	// Module and Tool name the call in the server log.
	Module, Tool string
	// Limits bounds the call's notes.
	Limits Limits
	// Now is the clock of the progress rate limit; nil means time.Now.
	Now func() time.Time
}

// Counts is what became of one call's notes.
type Counts struct {
	ProgressSent int // progress notifications handed to the Sink
	// ProgressCoalesced counts progress notes held back by the rate
	// limit and replaced by a later one before they could be sent.
	ProgressCoalesced int
	ProgressDropped   int // not above the last progress
	LogsSent          int // log messages accepted (server log and Sink)
	LogsDropped       int // over the count or byte limit
	Truncated         int // messages cut to their size limit
	Repaired          int // messages whose invalid UTF-8 was replaced
	// Escaped counts messages whose control or bidirectional formatting
	// characters were written as escapes (printable.Line).
	Escaped int
	Invalid int // unusable arguments, and log levels out of range
}

// Call is one tool call's notes: the limits, and where accepted notes go.
// It is not safe for concurrent use, and need not be: an instance runs on
// the goroutine that called it, and so do its host functions.
type Call struct {
	cfg Config
	lim Limits

	sent     bool // a progress was sent
	lastSent time.Time
	last     float64      // the last accepted progress
	accepted bool         // a progress was accepted
	held     progressNote // the progress the rate limit holds back, when holding
	holding  bool

	logs, logBytes int
	counts         Counts
}

type progressNote struct {
	done, total float64
	msg         string
}

// New returns the notes of one call.
func New(cfg Config) *Call {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Call{cfg: cfg, lim: cfg.Limits.withDefaults()}
}

// Progress is the progress host function: done of total, with the message
// at [ptr, ptr+n) of mem. See abi.ImportProgress.
func (c *Call) Progress(mem Memory, done, total float64, ptr, n uint32) abi.NoteStatus {
	if math.IsNaN(done) || math.IsInf(done, 0) {
		c.counts.Invalid++
		return abi.NoteInvalid
	}
	msg, ok := c.message(mem, ptr, n, c.lim.ProgressBytes)
	if !ok {
		return abi.NoteInvalid
	}
	if c.accepted && done <= c.last {
		// MCP: "the progress value MUST increase with each notification".
		c.counts.ProgressDropped++
		return abi.NoteDropped
	}
	c.accepted, c.last = true, done
	if math.IsNaN(total) || math.IsInf(total, 0) || total <= 0 {
		total = 0
	}
	p := progressNote{done, total, msg}
	now := c.cfg.Now()
	if c.sent && now.Sub(c.lastSent) < c.lim.ProgressInterval {
		if c.holding {
			c.counts.ProgressCoalesced++
		}
		c.held, c.holding = p, true
		return abi.NoteAccepted
	}
	if c.holding {
		c.counts.ProgressCoalesced++ // superseded by p
		c.holding = false
	}
	c.send(p, now)
	return abi.NoteAccepted
}

func (c *Call) send(p progressNote, now time.Time) {
	c.sent, c.lastSent = true, now
	c.counts.ProgressSent++
	if c.cfg.Sink != nil {
		c.cfg.Sink.Progress(p.done, p.total, p.msg)
	}
}

// Log is the log host function: one message of level at [ptr, ptr+n) of
// mem. See abi.ImportLog.
func (c *Call) Log(mem Memory, level int32, ptr, n uint32) abi.NoteStatus {
	lv := abi.LogLevel(level)
	if !lv.Valid() {
		c.counts.Invalid++
		lv = abi.LogError
	}
	if c.logs >= c.lim.LogCount || c.logBytes >= c.lim.LogTotalBytes {
		// Checked before reading: a guest over its limits costs no copy.
		c.counts.LogsDropped++
		return abi.NoteDropped
	}
	msg, ok := c.message(mem, ptr, n, c.lim.LogBytes)
	if !ok {
		return abi.NoteInvalid
	}
	if c.logBytes+len(msg) > c.lim.LogTotalBytes {
		c.counts.LogsDropped++
		return abi.NoteDropped
	}
	c.logs++
	c.logBytes += len(msg)
	c.counts.LogsSent++
	c.cfg.Logger.LogAttrs(context.Background(), slogLevel(lv), "guest log",
		slog.String("module", c.cfg.Module), slog.String("tool", c.cfg.Tool),
		slog.String("guest_level", lv.String()), slog.String("message", msg))
	if c.cfg.Sink != nil {
		c.cfg.Sink.Log(lv, msg)
	}
	return abi.NoteAccepted
}

// message reads a note's message, counting what it had to fix; false
// when the range is outside mem (counted as invalid).
func (c *Call) message(mem Memory, ptr, n uint32, limit int) (string, bool) {
	msg, fixed, ok := readMessage(mem, ptr, n, limit)
	if !ok {
		c.counts.Invalid++
	}
	if fixed&truncated != 0 {
		c.counts.Truncated++
	}
	if fixed&repaired != 0 {
		c.counts.Repaired++
	}
	if fixed&escaped != 0 {
		c.counts.Escaped++
	}
	return msg, ok
}

// Flush sends the progress the rate limit held back, if any: the last
// progress a call reports always reaches its caller. The host calls it
// when the guest has returned, before the call's result goes back.
func (c *Call) Flush() {
	if c.holding {
		c.holding = false
		c.send(c.held, c.cfg.Now())
	}
}

// Report logs, once the call is over, what the limits and checks did to
// its notes, when they did anything: an operator sees a guest that
// reports too much or passes bad arguments. It returns the counts.
func (c *Call) Report() Counts {
	k := c.counts
	if k.ProgressDropped+k.LogsDropped+k.Truncated+k.Repaired+k.Escaped+k.Invalid > 0 {
		c.cfg.Logger.LogAttrs(context.Background(), slog.LevelWarn, "guest notes limited",
			slog.String("module", c.cfg.Module), slog.String("tool", c.cfg.Tool),
			slog.Int("progress_sent", k.ProgressSent), slog.Int("progress_dropped", k.ProgressDropped),
			slog.Int("logs_sent", k.LogsSent), slog.Int("logs_dropped", k.LogsDropped),
			slog.Int("truncated", k.Truncated), slog.Int("repaired", k.Repaired),
			slog.Int("escaped", k.Escaped), slog.Int("invalid", k.Invalid))
	}
	return k
}

// Counts returns what became of the call's notes so far.
func (c *Call) Counts() Counts { return c.counts }

func slogLevel(l abi.LogLevel) slog.Level {
	switch l {
	case abi.LogDebug:
		return slog.LevelDebug
	case abi.LogInfo, abi.LogNotice:
		return slog.LevelInfo
	case abi.LogWarning:
		return slog.LevelWarn
	}
	return slog.LevelError
}
