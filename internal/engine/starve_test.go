package engine_test

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// Other processes holding the generator's CPUs (twice as many busy
// processes as cores) starve it: its threads wait on a run queue, which the
// phase records from schedstat, and the validity names the starved
// generator — a typed warning — though its own CPU share is low. Not
// parallel: the busy processes would slow the other tests.
func TestStarvedGeneratorIsRecorded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the run-queue wait is read from Linux's schedstat")
	}
	exe, _ := os.Executable()
	for range 2 * runtime.NumCPU() {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "PLATEAU_TEST_SPIN=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	srv := newAllergyServer(t)
	d, _, _ := runPlan(t, context.Background(), simplePlan, srv.URL, "workloads.w.load={users: 4, duration: 2s}")
	ph := d.Info.Phases[0]
	v := d.JudgeValidity()
	t.Logf("run queue %.1f ms (%.1f%% of runnable time), generator CPU %.1f%%, starved %v", ph.RunQueueMs, ph.RunQueuePct, ph.CPUPct, v.Phases[0].Starved)
	if ph.RunQueueMs <= 0 || ph.RunQueuePct <= 0 {
		t.Fatalf("run-queue wait %v ms (%v%%) not recorded", ph.RunQueueMs, ph.RunQueuePct)
	}
	if !v.Phases[0].Starved || len(v.Warnings()) != 1 || v.Warnings()[0].Kind != "generator_starved" {
		t.Errorf("validity %+v: want the starved generator named", v)
	}
}
