//go:build race

package engine

// raceEnabled: the race detector instruments allocations and makes sync.Pool
// drop items at random, so allocation counts mean nothing under it.
const raceEnabled = true
