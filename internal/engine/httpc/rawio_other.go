//go:build !unix

package httpc

import "errors"

// Outside Unix the requests and responses go through the ordinary net.Conn
// calls (sendAwait falls back on any error, counter.Read checks rawIO).
func rawWrite(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

func rawRead(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

const rawIO = false
