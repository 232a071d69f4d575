//go:build !linux

package monitor

// threadCPUSeconds is not measured outside Linux; the cost is reported as 0.
func threadCPUSeconds() float64 { return 0 }
