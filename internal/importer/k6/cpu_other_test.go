//go:build !unix

package k6

import "time"

func procCPU() time.Duration { return 0 }
