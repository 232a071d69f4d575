package rundir

import (
	"testing"
	"time"
)

// TestRunID: Create gives every new run its own id, kept in run.json; a
// run.json without one gets the same derived id each time it is read, and
// different runs different ones.
func TestRunID(t *testing.T) {
	t.Parallel()
	var ids []string
	for range 2 {
		dir := t.TempDir()
		w, err := Create(dir, &Info{Tool: "plateau", Name: "same"}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		in, err := ReadInfo(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(in.ID) != 32 || in.RunID() != in.ID {
			t.Fatalf("run.json id %q", in.ID)
		}
		ids = append(ids, in.ID)
	}
	if ids[0] == ids[1] {
		t.Errorf("two runs got one id %s", ids[0])
	}
	old := Info{Tool: "plateau", Name: "legacy", Start: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC), Host: Host{Hostname: "gen1"}}
	again := old
	if old.RunID() != again.RunID() || old.RunID()[:2] != "d-" {
		t.Errorf("derived id unstable or unmarked: %s %s", old.RunID(), again.RunID())
	}
	other := old
	other.Start = other.Start.Add(time.Second)
	if other.RunID() == old.RunID() {
		t.Errorf("two old runs share the derived id %s", old.RunID())
	}
}
