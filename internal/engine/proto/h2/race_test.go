//go:build race

package h2

// raceEnabled: the race detector is on (it allocates on its own).
const raceEnabled = true
