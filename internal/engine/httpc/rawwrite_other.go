//go:build !unix

package httpc

import "errors"

// rawWrite is not used outside Unix: the request goes through the
// ordinary write (sendAwait falls back on any error).
func rawWrite(fd uintptr, p []byte) (int, error) {
	return 0, errors.ErrUnsupported
}
