package cli

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/output/promtest"
)

// TestLivePhases: the live phases of a foreign run follow the rule the
// report derives its phases with (importer.DerivePhases) from the same
// readings: a user count steady for the minimum is a phase from its
// first second, named as the report names it; shorter counts and zero
// are no phase.
func TestLivePhases(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_800_000_000, 0).UTC()
	// Users read by the end of each second: a ramp 1, 2, 3, then 4 for 5
	// s, 2 for 2 s, 4 for 4 s, 0.
	counts := []int{1, 2, 3, 4, 4, 4, 4, 4, 2, 2, 4, 4, 4, 4, 0}
	lp := livePhases{min: 3 * time.Second}
	threads := map[int64]int32{}
	var during []int
	for i, n := range counts {
		sec := t0.Add(time.Duration(i) * time.Second)
		_, ph := lp.track(sec, n)
		during = append(during, ph)
		threads[sec.Unix()] = int32(n)
	}
	want := importer.DerivePhases(threads, 3*time.Second)
	if len(lp.list) != len(want) {
		t.Fatalf("live phases %+v, the report's %+v", lp.list, want)
	}
	for i, p := range lp.list {
		w := want[i]
		// The report names a count seen twice "(1)", "(2)"; live, the
		// first cannot know a second will come.
		name := strings.Replace(w.Name, " (1)", "", 1)
		if p.Name != name || p.Users != w.Users || !p.Start.Equal(w.Start) || p.End == nil || !p.End.Equal(w.End) {
			t.Errorf("phase %d: live %s %d users %s–%v, the report's %s %d users %s–%s", i, p.Name, p.Users, p.Start, p.End, w.Name, w.Users, w.Start, w.End)
		}
	}
	// The samples of a second belong to the phase known when it began.
	if fmt.Sprint(during) != "[-1 -1 -1 -1 -1 0 0 0 -1 -1 -1 -1 1 1 -1]" {
		t.Errorf("phase after each second %v", during)
	}
}

// scrapePhases sums plateau_requests_total by its phase label.
func scrapePhases(addr string) (map[string]float64, bool) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, false
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "plateau_requests_total{") {
			continue
		}
		ph := ""
		if i := strings.Index(line, `phase="`); i >= 0 {
			ph = line[i+len(`phase="`):]
			ph = ph[:strings.IndexByte(ph, '"')]
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			out[ph] += v
		}
	}
	return out, sc.Err() == nil && resp.StatusCode == http.StatusOK
}

// checkLivePhase runs a foreign script with --listen until /metrics
// counts requests in phase want (the tool's user count held for the
// minimum), then stops it: the report's phase table has that phase, and
// the requests /metrics counted in it are no more than the report puts in
// it… nor fewer than those counted live before the stop.
func checkLivePhase(t *testing.T, dir string, args []string, want string) {
	t.Helper()
	addr := promtest.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runOutcome, 1)
	go func() {
		var o runOutcome
		o.code, o.stdout, o.stderr = runCLICtx(ctx, append(append([]string{"run"}, args...), "--listen", addr, "-o", dir, "-q")...)
		done <- o
	}()
	var live map[string]float64
	waitFor(t, fmt.Sprintf("requests in phase %q on /metrics", want), 5*time.Minute, done, func() bool {
		m, ok := scrapePhases(addr)
		live = m
		return ok && m[want] > 0
	})
	for k := range live {
		if k != "" && k != want {
			t.Errorf("live phase %q besides %q: %v", k, want, live)
		}
	}
	cancel()
	o := <-done
	checkInterrupted(t, dir, o.code, o.stdout, o.stderr)
	s := readSummary(t, dir)
	var names []string
	for _, p := range s.Phases {
		names = append(names, p.Name)
	}
	found := false
	for _, p := range s.Phases {
		if p.Name != want {
			continue
		}
		found = true
		var n int64
		for _, l := range p.Labels {
			if l.Label == "TOTAL" {
				n = l.Samples
			}
		}
		if float64(n) < live[want] {
			t.Errorf("phase %s: the report counts %d requests, /metrics had counted %v in it already", want, n, live[want])
		}
	}
	if !found {
		t.Errorf("the report's phases %v lack %q, the live one", names, want)
	}
}

func TestRunK6LivePhase(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv, _ := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "phase.js")
	if err := os.WriteFile(script, []byte(`import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE + '/cart');
  sleep(0.2);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	checkLivePhase(t, filepath.Join(tmp, "run"), []string{script, "-e", "BASE=" + srv.URL, "--set", "users=2", "--set", "duration=10m"}, "2 VUs")
}

func TestRunJMeterLivePhase(t *testing.T) {
	_, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	srv, _ := countingServer()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	plan := copyScript(t, "../importer/jtl/testdata/plan.jmx")
	checkLivePhase(t, filepath.Join(t.TempDir(), "run"), []string{plan, "-J", "port=" + port, "--set", "users=2", "--set", "duration=600"}, "2 threads")
}

func TestRunLocustLivePhase(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	srv, _ := countingServer()
	defer srv.Close()
	script := copyScript(t, "../executor/testdata/locust-quickstart/locustfile.py")
	checkLivePhase(t, filepath.Join(t.TempDir(), "run"), []string{script, "--set", "target=" + srv.URL, "--set", "users=3", "--set", "ramp_up=1s", "--set", "duration=600"}, "3 threads")
}

func TestRunGatlingLivePhase(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	t.Parallel()
	srv, _ := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "sim", "PhaseSimulation.java")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(`package sim;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;
import java.time.Duration;

public class PhaseSimulation extends Simulation {
  HttpProtocolBuilder httpProtocol = http.baseUrl(System.getProperty("base"));
  ScenarioBuilder scn = scenario("phase").forever().on(exec(http("cart").get("/cart")).pause(Duration.ofMillis(100)));
  {
    setUp(scn.injectOpen(atOnceUsers(3))).protocols(httpProtocol).maxDuration(Duration.ofMinutes(10));
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	checkLivePhase(t, filepath.Join(tmp, "run"), []string{script, "-J", "base=" + srv.URL}, "3 threads")
}
