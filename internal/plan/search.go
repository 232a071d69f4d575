package plan

import (
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
)

// LoadSearch, a load's search: block, asks for a capacity search instead of
// one run at the load: `plateau run` (and `plateau capacity`, whose flags
// override it) probes the workload at loads the search chooses, from the
// load's rate: (req/s) or users:, and answers with the highest load at
// which every requirement holds (docs/capacity.md). Loads are in the
// load's unit: requests per second for rate:, users for users:.
type LoadSearch struct {
	// Start is the first load probed (default: the load's rate or users);
	// Max the highest (default 16 × Start).
	Start float64 `yaml:"start"`
	Max   float64 `yaml:"max"`
	// Resolution: "5%" (default), "10users", "20/s".
	Resolution string `yaml:"resolution"`
	// Warmup (default 10 s, excluded from each probe's figures), Probe
	// (the measured part, at least; default 30 s) and Cooldown (default
	// 5 s) of each probe.
	Warmup   time.Duration `yaml:"warmup"`
	Probe    time.Duration `yaml:"probe"`
	Cooldown time.Duration `yaml:"cooldown"`
	// MaxProbes (default 20) and MaxTime (0: no bound) are the search's
	// budgets; MinSamples the completed requests a probe needs.
	MaxProbes  int           `yaml:"max_probes"`
	MaxTime    time.Duration `yaml:"max_time"`
	MinSamples int           `yaml:"min_samples"`
	// MaxErrorPct is the error-rate guard, in percent (default 20).
	MaxErrorPct float64 `yaml:"max_error_pct"`
	// FailBelow fails the run (exit 1) when the capacity found is below
	// it; 0: never.
	FailBelow float64 `yaml:"fail_below"`
	Pos       Pos     `yaml:"-"`
}

// Defaults of a search: block (those of `plateau capacity`'s flags).
const (
	DefaultSearchWarmup   = 10 * time.Second
	DefaultSearchCooldown = 5 * time.Second
)

// DefaultLoadSearch is a search: block with every default set.
func DefaultLoadSearch() LoadSearch {
	var s LoadSearch
	presetSearch(&s)
	return s
}

func presetSearch(s *LoadSearch) {
	s.Resolution = "5%"
	s.Warmup, s.Probe, s.Cooldown = DefaultSearchWarmup, search.DefaultDuration, DefaultSearchCooldown
	s.MaxProbes, s.MaxErrorPct = search.DefaultMaxProbes, search.DefaultMaxErrorPct
}

// checkSearch checks a search: block on its own; checkLoadSearch checks it
// against its load.
func (d *decoder) checkSearch(s *LoadSearch, n *yaml.Node, k keyset) {
	nonNeg := func(key string, v float64) {
		if k.has(key) && (v < 0 || math.IsNaN(v)) {
			d.errorf(at(n, k, key), "search: %s must not be negative", key)
		}
	}
	for _, key := range []string{"start", "max"} {
		v := map[string]float64{"start": s.Start, "max": s.Max}[key]
		if k.has(key) && !(v > 0) {
			d.errorf(at(n, k, key), "search: %s must be a positive load", key)
		}
	}
	if k.has("start") && k.has("max") && s.Max < s.Start && s.Start > 0 {
		d.errorf(at(n, k, "max"), "search: max %g is below start %g", s.Max, s.Start)
	}
	nonNeg("warmup", float64(s.Warmup))
	nonNeg("cooldown", float64(s.Cooldown))
	nonNeg("max_time", float64(s.MaxTime))
	nonNeg("min_samples", float64(s.MinSamples))
	nonNeg("fail_below", s.FailBelow)
	if k.has("probe") && s.Probe <= 0 {
		d.errorf(at(n, k, "probe"), "search: probe must be positive")
	}
	if k.has("max_probes") && s.MaxProbes < 1 {
		d.errorf(at(n, k, "max_probes"), "search: max_probes must be at least 1")
	}
	if k.has("max_error_pct") && !(s.MaxErrorPct > 0 && s.MaxErrorPct <= 100) {
		d.errorf(at(n, k, "max_error_pct"), "search: max_error_pct must be in (0, 100]")
	}
}

// checkLoadSearch checks a load's search: block against the load's model:
// the search varies rate: (open) or users: (closed), so its resolution's
// unit must be that model's and a closed search's loads whole users.
func (d *decoder) checkLoadSearch(l *Load, model string, n *yaml.Node, k keyset) {
	s := l.Search
	if s == nil {
		return
	}
	sn := at(n, k, "search")
	var m search.Model
	switch {
	case model == "open":
		m = search.Open
	case model == "closed" && !k.has("iterations"), model == "pacing":
		// pacing: a search over the users, each keeping the pace.
		m = search.Closed
	case model == "closed":
		d.errorf(k["iterations"].key, "load: a search needs a load that lasts a time (the probes'), not iterations")
		return
	default:
		d.errorf(k["search"].key, "load: search applies to a load of rate: or users: (with or without pace:), not %s (the search chooses the loads)", model)
		return
	}
	sk := d.keysOf(sn)
	if _, _, err := search.ParseResolution(s.Resolution, m); err != nil {
		d.errorf(at(sn, sk, "resolution"), "search: resolution %v", err)
	}
	if m == search.Closed {
		for key, v := range map[string]float64{"start": s.Start, "max": s.Max} {
			if v > 0 && v != math.Round(v) {
				d.errorf(at(sn, sk, key), "search: %s must be whole users for a load of users:", key)
			}
		}
	}
}

// keysOf is the keyset of a mapping node (nil for anything else).
func (d *decoder) keysOf(n *yaml.Node) keyset {
	n = d.resolve(n)
	k := keyset{}
	if n == nil || n.Kind != yaml.MappingNode {
		return k
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k[n.Content[i].Value] = pair{key: n.Content[i], val: n.Content[i+1]}
	}
	return k
}
