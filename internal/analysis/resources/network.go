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
	What              NetFaultKind

	N       float64 // the rate integrated over the span: how many
	MaxPerS float64 // the highest rate read
}

// NetFaultKind is what a network fault counts, worded by the report.
type NetFaultKind int

// Network faults.
const (
	NetNone   NetFaultKind = iota
	NetErrors              // packets refused or malformed
	NetDrops               // packets dropped
)

// String names the kind in logs and tests.
func (k NetFaultKind) String() string {
	switch k {
	case NetErrors:
		return "errors"
	case NetDrops:
		return "drops"
	}
	return "none"
}

// netFaultKind is NetErrors or NetDrops for a per-second network error or
// drop series (the node recipe's net_errors_per_s / net_drops_per_s, the
// kubernetes recipe's pod_net_errors_per_s / pod_net_drops_per_s), else
// NetNone.
func netFaultKind(name, unit string) NetFaultKind {
	n := strings.ToLower(name)
	if !strings.Contains(n, "net") || !strings.HasSuffix(unit, "/s") && !strings.HasSuffix(n, "_per_s") {
		return NetNone
	}
	switch {
	case strings.Contains(n, "err"):
		return NetErrors
	case strings.Contains(n, "drop"):
		return NetDrops
	}
	return NetNone
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
			if what == NetNone {
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
