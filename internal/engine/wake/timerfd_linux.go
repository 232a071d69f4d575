//go:build linux

package wake

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// timerfd is a source on a Linux timerfd, read by a goroutine of its own
// through the runtime's poller (the file is non-blocking, so os.File
// registers it there): the expiry wakes the poller like a socket would.
type timerfd struct {
	f     *os.File
	rc    syscall.RawConn
	spec  unix.ItimerSpec  // the next arming (set, then settime reads it)
	setFn func(fd uintptr) // settime, bound once: Arm allocates nothing
}

func newPrecise(c chan struct{}) (source, bool) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, false
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, false
	}
	s := &timerfd{f: f, rc: rc}
	s.setFn = s.settime
	go s.read(c)
	return s, true
}

// read passes each expiry on to c until the file is closed.
func (s *timerfd) read(c chan struct{}) {
	var buf [8]byte // the expiry count; one Arm is one expiry
	for {
		if _, err := s.f.Read(buf[:]); err != nil {
			return // closed
		}
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (s *timerfd) arm(d time.Duration) {
	// A zero it_value would disarm: d is at least 1 ns (Arm).
	// Control holds the descriptor open meanwhile: after Close it does
	// nothing, and cannot arm a file that took the number over.
	s.spec = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_ = s.rc.Control(s.setFn)
}

func (s *timerfd) settime(fd uintptr) { _ = unix.TimerfdSettime(int(fd), 0, &s.spec, nil) }

func (s *timerfd) close() { s.f.Close() }
