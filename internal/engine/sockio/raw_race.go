//go:build unix && race

package sockio

import "syscall"

// Under the race detector the hot path uses syscall.Read and syscall.Write:
// their annotations are what tells the detector that a response read from a
// socket happens after the server wrote it (raw system calls carry none, and
// tests that share state with an in-process server would report races).
func RawWrite(fd uintptr, p []byte) (int, error) { return nonNegative(syscall.Write(int(fd), p)) }

func RawRead(fd uintptr, p []byte) (int, error) { return nonNegative(syscall.Read(int(fd), p)) }

// nonNegative gives the raw calls' result on an error: 0 bytes, not -1.
func nonNegative(n int, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return n, nil
}

const Available = true
