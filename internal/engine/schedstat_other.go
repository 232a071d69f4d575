//go:build !linux

package engine

import "time"

// schedStat is unknown on this platform.
func schedStat() (run, wait time.Duration, ok bool) { return 0, 0, false }
