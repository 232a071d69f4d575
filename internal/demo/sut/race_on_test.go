//go:build race

package sut

// raceEnabled is true under -race, where SQLite (transpiled C) runs about
// 20× slower and timing bounds do not apply.
const raceEnabled = true
