//go:build unix

package httpc

import "syscall"

// rawWrite writes p to the non-blocking socket fd.
func rawWrite(fd uintptr, p []byte) (int, error) {
	return syscall.Write(int(fd), p)
}
