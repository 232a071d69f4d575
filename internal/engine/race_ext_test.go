//go:build race

package engine_test

// raceOn: built with -race, which changes memory and allocation figures.
const raceOn = true
