package changepoint

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// otavaPython finds a Python that can import Apache Otava: $OTAVA_PYTHON,
// then the virtualenv testdata/install-deps.sh makes ($OTAVA_VENV, default
// /opt/plateau-otava). Without one the test skips, except under CI=true,
// where it fails: a CI machine that lacks Otava must not pass by checking
// nothing.
func otavaPython(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("OTAVA_PYTHON")}
	venv := os.Getenv("OTAVA_VENV")
	if venv == "" {
		venv = "/opt/plateau-otava"
	}
	cands = append(cands, filepath.Join(venv, "bin", "python"))
	for _, c := range cands {
		if c == "" {
			continue
		}
		if err := exec.Command(c, "-c", "import otava.analysis").Run(); err == nil {
			return c
		}
	}
	why := "Apache Otava not installed (set $OTAVA_PYTHON, or run internal/analysis/changepoint/testdata/install-deps.sh)"
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this fails instead of skipping", why)
	}
	t.Skip(why)
	return ""
}

type otavaAnswer struct {
	Version   string  `json:"otava_version"`
	EDivisive [][]int `json:"edivisive"`
}

func runOtava(t *testing.T, series [][]float64, maxP float64) otavaAnswer {
	t.Helper()
	py := otavaPython(t)
	req, err := json.Marshal(map[string]any{"series": series, "max_pvalue": maxP, "seed": 1})
	if err != nil {
		t.Fatal(err)
	}
	// a guard against a hung interpreter, not a speed test: Otava takes
	// ~20 CPU-s here, minutes of wall time on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "testdata/otava_changepoints.py")
	cmd.Stdin = bytes.NewReader(req)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("otava: %v\n%s", err, stderr.Bytes())
	}
	var ans otavaAnswer
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("otava's answer: %v\n%s", err, out)
	}
	if len(ans.EDivisive) != len(series) {
		t.Fatalf("otava answered %d series of %d", len(ans.EDivisive), len(series))
	}
	return ans
}

// otavaCases are the planted series and one with four changes of
// different sizes and signs.
var otavaCases = append(plantedCases[:len(plantedCases):len(plantedCases)], struct {
	name   string
	levels []level
	want   []int
	tol    int
	miss   int
}{"four steps", []level{{30, 100, 4}, {30, 110, 4}, {30, 95, 4}, {25, 130, 4}, {25, 120, 4}}, []int{30, 60, 90, 115}, 3, 0})

// TestAgreesWithOtava runs the planted series, 10 noise seeds each,
// through Apache Otava (PyPI) and through Detect at the same alpha, and
// compares the change points' positions. Both search every (τ, κ); they
// draw different permutations (Otava 100, plateau 199), and Otava lets a
// segment be one point long where plateau wants three, so a borderline
// split may differ. On these fixed seeds (Otava 0.8.0) 58 of 60 series
// give the same positions exactly, the short dip in all 10 seeds; the 2
// that differ are variance changes near alpha (seed 6: Otava [60], plateau
// none; seed 9: Otava [69 73], plateau [69]). Searching τ alone, plateau
// agreed on 42 of 50 and found none of the short dips.
func TestAgreesWithOtava(t *testing.T) {
	t.Parallel()
	const seeds = 10
	var series [][]float64
	for _, c := range otavaCases {
		for seed := range uint64(seeds) {
			series = append(series, planted(seed, c.levels...))
		}
	}
	ans := runOtava(t, series, DefaultAlpha)
	t.Logf("Apache Otava %s", ans.Version)
	exact, close := 0, 0
	for ci, c := range otavaCases {
		for seed := range seeds {
			i := ci*seeds + seed
			res, err := Detect(series[i], Options{}, rand.New(rand.NewPCG(uint64(seed), 1)))
			if err != nil {
				t.Fatal(err)
			}
			got, ref := indices(res), ans.EDivisive[i]
			switch {
			case slices.Equal(got, ref):
				exact++
			case near(got, ref, c.tol):
				close++
				t.Logf("%s seed %d: plateau %v, otava %v", c.name, seed, got, ref)
			default:
				t.Logf("%s seed %d: plateau %v, otava %v (disagree)", c.name, seed, got, ref)
			}
			if c.name == "short dip" && (!slices.Equal(got, ref) || !near(got, c.want, c.tol)) {
				t.Errorf("short dip seed %d: plateau %v, otava %v, planted %v", seed, got, ref, c.want)
			}
			if c.want == nil && (len(got) > 0 || len(ref) > 0) {
				t.Errorf("%s seed %d: noise gave change points: plateau %v, otava %v", c.name, seed, got, ref)
			}
		}
	}
	n := len(series)
	t.Logf("%d of %d series: the same change points; %d within the tolerance", exact, n, close)
	if exact < n*90/100 || exact+close < n*95/100 {
		t.Errorf("plateau and Otava agree exactly on %d and within tolerance on %d of %d series, want ≥ 90 %% and ≥ 95 %%", exact, exact+close, n)
	}
}
