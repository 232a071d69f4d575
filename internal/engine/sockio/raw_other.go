//go:build !unix

package sockio

import "errors"

// Outside Unix there are no raw socket calls: Wrap returns the connection
// as it is, and callers of RawWrite fall back on the ordinary write.
func RawWrite(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

func RawRead(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

const Available = false

// RawPeek is not available here; callers treat the connection as open.
func RawPeek(fd uintptr) (int, error) { return 0, errors.ErrUnsupported }
