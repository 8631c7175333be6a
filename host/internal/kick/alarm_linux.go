package kick

import (
	"encoding/binary"
	"time"

	"golang.org/x/sys/unix"
)

// eventAlarm sleeps in ppoll on an eventfd: ppoll's timeout has
// nanosecond resolution (the kernel's high-resolution timers), where the
// Go runtime's own sleeps wait in epoll with a millisecond timeout, and a
// write to the eventfd cuts the sleep short.
type eventAlarm struct{ fd int }

func newAlarm() alarm {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil // no kicker: deadlines still hold, only less promptly
	}
	return &eventAlarm{fd: fd}
}

func (a *eventAlarm) sleep(d time.Duration) {
	fds := []unix.PollFd{{Fd: int32(a.fd), Events: unix.POLLIN}}
	ts := unix.NsecToTimespec(int64(d))
	// EINTR (a signal, such as the runtime's preemption) only ends the
	// sleep early: the kicker looks again.
	if n, _ := unix.Ppoll(fds, &ts, nil); n > 0 {
		var b [8]byte
		_, _ = unix.Read(a.fd, b[:])
	}
}

func (a *eventAlarm) interrupt() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	_, _ = unix.Write(a.fd, b[:])
}

func (a *eventAlarm) close() { _ = unix.Close(a.fd) }
