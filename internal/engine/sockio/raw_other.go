//go:build !unix

package sockio

import "errors"

// Outside Unix there are no raw socket calls: Wrap returns the connection
// as it is, and callers of RawWrite fall back on the ordinary write.
func RawWrite(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

func RawRead(fd uintptr, p []byte) (int, error) { return 0, errors.ErrUnsupported }

const Available = false
