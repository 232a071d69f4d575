package reporttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Large shapes a long synthetic run for scale tests: one phase at a
// constant rate, two request labels, per-second interval records, and
// optionally one host and one JVM monitored every second.
type Large struct {
	Duration time.Duration
	// Rate is the samples per second over all labels.
	Rate    float64
	Monitor bool
	// Labels is the number of request labels the rate is split over;
	// 0 means the two of the scale test, "GET /items" and "POST /orders".
	Labels int
}

// Samples is the number of samples the run holds.
func (l Large) Samples() int64 {
	n := 2
	if l.Labels > 0 {
		n = l.Labels
	}
	return int64(math.Round(l.Rate/float64(n))) * int64(n) * int64(l.Duration/time.Second)
}

// WriteLarge writes the run fast: it encodes a few dozen distinct
// histograms per label once and reuses them, so building 24 hours of
// records takes seconds, not the run's duration.
func WriteLarge(dir string, l Large) error {
	secs := int(l.Duration / time.Second)
	end := Start.Add(l.Duration)
	info := &rundir.Info{Tool: "plateau", Version: "0.1.0-test", Name: "soak", Start: Start, End: &end, Status: rundir.StatusCompleted,
		SLA:       []string{"avg(response_time) < 200ms", "error_rate < 1%"},
		Workloads: []rundir.WorkloadInfo{{Name: "soak", Model: "open", Rate: l.Rate, Shape: "constant"}},
		Phases:    []rundir.PhaseInfo{{Name: "soak", Workload: "soak", Start: Start, End: &end, Rate: l.Rate}}}
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(9, 9))
	labels := []string{"GET /items", "POST /orders"}
	if l.Labels > 0 {
		labels = labels[:0]
		for i := range l.Labels {
			labels = append(labels, fmt.Sprintf("GET /api/resource-%02d", i+1))
		}
	}
	perLabel := int(math.Round(l.Rate / float64(len(labels))))
	const variants = 32
	recs := make([][]rundir.IntervalRecord, len(labels))
	for li, name := range labels {
		for v := 0; v < variants; v++ {
			a := metrics.NewAgg()
			for range perLabel {
				a.AddValue(int64(lognormal(rng, 80+40*float64(li%4), 0.4) * 1000))
			}
			r, err := rundir.RecordOf(0, metrics.Key{Workload: "soak", Phase: 0, Label: name}, a)
			if err != nil {
				return err
			}
			recs[li] = append(recs[li], r)
		}
	}
	for s := 0; s < secs; s++ {
		t := Start.Unix() + int64(s)
		for li := range labels {
			r := recs[li][(s*7+li)%variants]
			r.T = t
			if err := w.WriteRecord(&r); err != nil {
				return err
			}
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if !l.Monitor {
		return nil
	}
	mdir := filepath.Join(dir, mondata.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return err
	}
	var events []byte
	for _, tg := range []struct{ name, kind string }{{"app-host", mondata.KindHost}, {"app", mondata.KindJVM}} {
		file := tg.name + ".csv"
		e, _ := json.Marshal(map[string]any{"time": Start.Format(time.RFC3339Nano), "target": tg.name, "kind": tg.kind, "event": "started", "file": file, "interval_s": 1})
		events = append(append(events, e...), '\n')
		f, err := os.Create(filepath.Join(mdir, file))
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<20)
		bw.WriteString(mondata.CSVHeader)
		eu, ygc := 0.0, 0.0
		for s := 0; s < secs; s++ {
			ts := Start.Add(time.Duration(s) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z07:00")
			row := func(metric, unit string, v float64) {
				fmt.Fprintf(bw, "%s,%s,%s,%s,%s,%s\n", ts, tg.name, tg.kind, metric, unit, strconv.FormatFloat(v, 'f', -1, 64))
			}
			if tg.kind == mondata.KindHost {
				u := 30 + 5*rng.NormFloat64()
				row("cpu_user_pct", "%", round2(u))
				row("cpu_system_pct", "%", round2(6+rng.NormFloat64()))
				row("cpu_iowait_pct", "%", 0.3)
				row("cpu_idle_pct", "%", round2(64-u+30))
				row("mem_used_bytes", "bytes", 3e9+float64(rng.IntN(1e7)))
				row("net_rx_bytes_per_s", "bytes/s", 2e5+float64(rng.IntN(1e4)))
				row("net_tx_bytes_per_s", "bytes/s", 9e5+float64(rng.IntN(1e4)))
			} else {
				eu += 3e4
				if eu > 4e5 {
					eu, ygc = 1e4, ygc+1
				}
				row("EU", "KB", eu)
				row("OU", "KB", 2e5+float64(rng.IntN(1000)))
				row("YGC", "", ygc)
				row("FGC", "", 0)
				row("heap_used_bytes", "bytes", (eu+2e5)*1024)
			}
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(mdir, mondata.EventsFile), events, 0o644)
}
