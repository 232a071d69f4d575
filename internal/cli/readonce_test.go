package cli

import (
	"testing"
	"time"
)

// readOnce reads until found, then never again.
func TestReadOnce(t *testing.T) {
	calls := 0
	at := time.Unix(100, 0)
	read := readOnce(func() (time.Time, bool) {
		calls++
		return at, calls >= 2
	})
	if _, ok := read(); ok {
		t.Fatal("found on the first reading, which reported nothing")
	}
	for range 3 {
		if got, ok := read(); !ok || !got.Equal(at) {
			t.Fatalf("%v %v", got, ok)
		}
	}
	if calls != 2 {
		t.Errorf("%d readings, want 2 (until found, then kept)", calls)
	}
}
