//go:build linux

package wake

import (
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/plateau-perf/plateau/internal/engine/sockio"
)

// timerfd is a source on a Linux timerfd, read by a goroutine of its own
// through the runtime's poller (the file is non-blocking, so os.File
// registers it there): the expiry wakes the poller like a socket would.
//
// Its two system calls, the read of an expiry and the arming, are raw (no
// entersyscall), for the reason sockio's are: a system call entered through
// the scheduler wakes the runtime's sysmon thread whenever the process was
// idle, and a timer fires after an idle gap by definition. With os.File.Read
// each expiry woke sysmon (a futex wake, its 20 µs sleep, a futex wait: three
// context switches on the generator's CPU), and at 1,000 req/s plateau spent
// more CPU than at 5,000 (docs/performance.md, "Issue 21 on a third VM").
type timerfd struct {
	f     *os.File
	rc    syscall.RawConn
	spec  unix.ItimerSpec  // the next arming (set, then settime reads it)
	setFn func(fd uintptr) // settime, bound once: Arm allocates nothing
	buf   [8]byte          // the expiry count; one Arm is one expiry
	err   error            // the read's error other than EAGAIN
	getFn func(fd uintptr) bool
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
	s.setFn, s.getFn = s.settime, s.get
	go s.read(c)
	return s, true
}

// read passes each expiry on to c until the file is closed.
func (s *timerfd) read(c chan struct{}) {
	for {
		// RawConn.Read calls get until it reports done, waiting on the
		// poller in between; it fails once the file is closed.
		if err := s.rc.Read(s.getFn); err != nil || s.err != nil {
			return
		}
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// get reads one expiry; false when none is there yet (EAGAIN).
func (s *timerfd) get(fd uintptr) bool {
	for {
		_, err := sockio.RawRead(fd, s.buf[:])
		switch err {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		case nil:
		default:
			s.err = err
		}
		return true
	}
}

func (s *timerfd) arm(d time.Duration) {
	// A zero it_value would disarm: d is at least 1 ns (Arm).
	// Control holds the descriptor open meanwhile: after Close it does
	// nothing, and cannot arm a file that took the number over.
	s.spec = unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	_ = s.rc.Control(s.setFn)
}

// settime is timerfd_settime(fd, 0, &spec, nil), raw (see timerfd).
func (s *timerfd) settime(fd uintptr) {
	_, _, _ = syscall.RawSyscall6(unix.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&s.spec)), 0, 0, 0)
}

func (s *timerfd) close() { s.f.Close() }
