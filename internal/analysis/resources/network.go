package resources

import (
	"math"
	"strings"
	"time"
)

// A NetFault is a component whose network error or drop rate was above
// zero during a span: packets the system under test lost or refused while
// the load ran, which a client sees as timeouts and retransmissions.
type NetFault struct {
	Target, Component string
	What              string  // "errors" or "drops"
	N                 float64 // the rate integrated over the span: how many
	MaxPerS           float64 // the highest rate read
}

// netFaultKind is "errors" or "drops" for a per-second network error or
// drop series (the node recipe's net_errors_per_s / net_drops_per_s, the
// kubernetes recipe's pod_net_errors_per_s / pod_net_drops_per_s), "".
func netFaultKind(name, unit string) string {
	n := strings.ToLower(name)
	if !strings.Contains(n, "net") || !strings.HasSuffix(unit, "/s") && !strings.HasSuffix(n, "_per_s") {
		return ""
	}
	switch {
	case strings.Contains(n, "err"):
		return "errors"
	case strings.Contains(n, "drop"):
		return "drops"
	}
	return ""
}

// NetFaults lists the labelled series of network errors or drops that read
// above zero between from and to, in file order. N is the rate integrated
// over the readings in the span (each reading held until the next).
func NetFaults(ts []Target, from, to time.Time) []NetFault {
	var out []NetFault
	for _, t := range ts {
		if !Labelled(t.Kind) {
			continue
		}
		for _, s := range t.Series {
			what := netFaultKind(BaseName(s.Metric), s.Unit)
			if what == "" {
				continue
			}
			var n, peak float64
			for i, p := range s.Points {
				if p.T.Before(from) || p.T.After(to) || math.IsNaN(p.V) || math.IsInf(p.V, 0) || p.V <= 0 {
					continue
				}
				end := to
				if i+1 < len(s.Points) && s.Points[i+1].T.Before(to) {
					end = s.Points[i+1].T
				}
				n += p.V * end.Sub(p.T).Seconds()
				peak = max(peak, p.V)
			}
			if peak > 0 {
				out = append(out, NetFault{Target: t.Name, Component: ServiceName(t.Name, s), What: what, N: n, MaxPerS: peak})
			}
		}
	}
	return out
}
