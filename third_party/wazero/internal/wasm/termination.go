package wasm

import "sync/atomic"

// TerminationEpochStep is how far the termination epoch advances when a module is closed, and so
// also the number of loop headers compiled code runs between two exits to Go while no module is
// closed (see terminationEpoch).
const TerminationEpochStep = 1 << 16

// terminationEpoch lets compiled code with ensureTermination check cheaply at each loop header
// whether it must exit to Go to look at its module's Closed flag.
//
// Each call keeps a deadline on this epoch, set to the epoch plus TerminationEpochStep when the call
// starts and after each exit, and decremented at each loop header; compiled code exits to Go when
// the deadline is no longer ahead of the epoch. Closing any module advances the epoch by
// TerminationEpochStep, so every running call exits at its next loop header and the calls of the
// closed module fail there. Otherwise a call exits every TerminationEpochStep loop headers, which
// is what lets the Go runtime preempt the goroutine: native code cannot be preempted
// asynchronously, and a goroutine that never reaches Go code would block the scheduler (e.g. with
// GOMAXPROCS=1 no timer, so no deadline, could fire) and every stop-the-world of the GC.
//
// Compiled code reads it with plain 64-bit loads (atomic on amd64 and arm64); Go code uses atomics.
var terminationEpoch uint64

// TerminationEpochAddress returns the address compiled code reads the termination epoch from.
func TerminationEpochAddress() *uint64 {
	return &terminationEpoch
}

// TerminationDeadline returns the termination deadline a call sets after checking that its module
// is open: the current epoch plus TerminationEpochStep. The deadline must be taken before that
// check, so that a close racing with it is seen at the next loop header.
func TerminationDeadline() uint64 {
	return atomic.LoadUint64(&terminationEpoch) + TerminationEpochStep
}

// advanceTerminationEpoch makes every running call exit to Go at its next loop header.
func advanceTerminationEpoch() {
	atomic.AddUint64(&terminationEpoch, TerminationEpochStep)
}
