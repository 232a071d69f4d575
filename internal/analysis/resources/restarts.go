package resources

import (
	"math"
	"strings"
	"time"
)

// A Restart is a container (or any labelled component) whose restart
// counter rose during a span of time.
type Restart struct {
	Target, Component string
	// N is the counter's increase over the span: the sum of its rises, a
	// drop (the pod was recreated and its counter started again) counting
	// its new value, as Prometheus's increase() does.
	N float64
}

// IsRestartCounter reports whether a labelled series is a restart counter
// (the kubernetes recipe's pod_restarts, kube-state-metrics'
// kube_pod_container_status_restarts_total or a query of one) — not a rate
// of one, as a direct scrape records counters (…_per_s, unit "/s").
func IsRestartCounter(name, unit string) bool {
	return strings.Contains(strings.ToLower(name), "restarts") && !strings.HasSuffix(name, "_per_s") && !strings.HasSuffix(unit, "/s")
}

// Restarts lists the components of labelled targets whose restart counter
// increased between from and to, in file order. The counter's last reading
// before from (when the series has one) is the baseline, so a restart
// between the last sample before the run and its first is counted.
func Restarts(ts []Target, from, to time.Time) []Restart {
	var out []Restart
	for _, t := range ts {
		if !Labelled(t.Kind) {
			continue
		}
		for _, s := range t.Series {
			if !IsRestartCounter(BaseName(s.Metric), s.Unit) {
				continue
			}
			prev, n := math.NaN(), 0.0
			for _, p := range s.Points {
				if p.T.After(to) {
					break
				}
				v := p.V
				if math.IsNaN(v) || math.IsInf(v, 0) {
					continue
				}
				if !p.T.Before(from) && !math.IsNaN(prev) {
					if v >= prev {
						n += v - prev
					} else {
						n += v // reset
					}
				}
				prev = v
			}
			if n > 0 {
				out = append(out, Restart{Target: t.Name, Component: ServiceName(t.Name, s), N: n})
			}
		}
	}
	return out
}

// RestartCounters counts the restart counters of labelled targets, so that
// "no restart" can be told from "not watched".
func RestartCounters(ts []Target) int {
	n := 0
	for _, t := range ts {
		if !Labelled(t.Kind) {
			continue
		}
		for _, s := range t.Series {
			if IsRestartCounter(BaseName(s.Metric), s.Unit) && len(s.Points) > 0 {
				n++
			}
		}
	}
	return n
}
