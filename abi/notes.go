package abi

// Progress and logs: two more toolhost_v1 host functions (docs/ABI.md,
// "Progress and logs"). A tool tells its caller how far it has got and
// what it is doing while it runs; the host forwards what it accepts to the
// MCP client that made the call (notifications/progress when the request
// carried a progress token, notifications/message when the client set a
// log level) and logs every accepted message on the server.
//
// Neither function ever traps and neither fails the call: an argument the
// host cannot use (a message outside guest memory, a progress that is not
// a finite number) is dropped and counted, a message over the size limit
// is truncated, and a note over the per-call limits is dropped. The result
// says which, so a guest may stop reporting; it may as well ignore it.
//
// They need no grant: they reach only the caller of the call, never
// beyond the host. A module that imports only these is not open world.
const (
	// ImportProgress is `(done f64, total f64, msg_ptr i32, msg_len i32)
	// -> i32`: the call has done `done` of `total` units of work (total
	// not finite or <= 0: unknown), with an optional UTF-8 message at
	// [msg_ptr, msg_ptr+msg_len) (msg_len 0: none). Returns a NoteStatus.
	ImportProgress = "progress"
	// ImportLog is `(level i32, msg_ptr i32, msg_len i32) -> i32`: one log
	// message of the given LogLevel, UTF-8 at [msg_ptr, msg_ptr+msg_len).
	// Returns a NoteStatus.
	ImportLog = "log"
)

// NoteStatus is what progress and log return.
type NoteStatus int32

// The results of progress and log.
const (
	// NoteAccepted: the note was sent, or (progress only) held to be sent
	// when the rate limit allows; a later progress replaces a held one,
	// and the last one is always sent before the call's result. A message
	// over the size limit was truncated, and invalid UTF-8 repaired.
	NoteAccepted NoteStatus = 0
	// NoteDropped: the note was within the rules but over a limit (the
	// call's log count or bytes), or a progress that did not increase;
	// nothing was sent. Also the answer outside a tool call (in
	// _initialize at load, or toolhost_describe), where notes go nowhere.
	NoteDropped NoteStatus = 1
	// NoteInvalid: the arguments were unusable (the message is outside
	// guest memory, or done is NaN or infinite); nothing was sent.
	NoteInvalid NoteStatus = 2
)

// LogLevel is the level of a log message: the MCP (RFC 5424) severities a
// tool may use, in increasing order.
type LogLevel int32

// The log levels a guest may pass to log. Any other value (negative, or
// above LogError) is treated as LogError and counted as invalid by the
// host: a tool cannot raise an MCP alert or emergency.
const (
	LogDebug   LogLevel = 0
	LogInfo    LogLevel = 1
	LogNotice  LogLevel = 2
	LogWarning LogLevel = 3
	LogError   LogLevel = 4
)

// Valid reports whether l is one of the defined levels.
func (l LogLevel) Valid() bool { return l >= LogDebug && l <= LogError }

// String is the MCP name of the level ("debug" … "error"); a level that is
// not Valid is named as the host treats it: "error".
func (l LogLevel) String() string {
	switch l {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogNotice:
		return "notice"
	case LogWarning:
		return "warning"
	}
	return "error"
}
