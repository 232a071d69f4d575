//go:build !unix

package output

// cpuSeconds is not measured outside Unix systems.
func cpuSeconds() float64 { return 0 }
