package vmstat

import (
	"context"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/monitor"
)

func importVmstat(t *testing.T, cfg Config, opt importer.Options) ([]core.Series, *importer.Run, error) {
	t.Helper()
	opt.Dir = filepath.Join(t.TempDir(), "run")
	run, err := importer.NewRun(opt)
	if err != nil {
		t.Fatal(err)
	}
	ierr := New(cfg).Import(context.Background(), run)
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		return nil, run, ierr
	}
	series, _, err := monitor.Read(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return series, run, nil
}

func find(t *testing.T, ss []core.Series, metric string) core.Series {
	t.Helper()
	for _, s := range ss {
		if s.Metric == metric {
			return s
		}
	}
	t.Fatalf("no series %s", metric)
	return core.Series{}
}

// dataRows returns the data lines of vmstat output (not headers).
func dataRows(out string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) == 0 || f[0] == "procs" || f[0] == "r" {
			continue
		}
		rows = append(rows, f)
	}
	return rows
}

func TestRealVmstat(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("vmstat"); err != nil {
		importertest.MissingTool(t, "vmstat not installed (procps: internal/importer/testdata/install-deps.sh apt)")
	}
	type result struct {
		out string
		err error
	}
	run := func(args ...string) chan result {
		ch := make(chan result, 1)
		go func() {
			cmd := exec.Command("vmstat", args...)
			cmd.Env = append(os.Environ(), "TZ=UTC")
			out, err := cmd.Output()
			ch <- result{string(out), err}
		}()
		return ch
	}
	stamped, plain := run("-t", "1", "3"), run("1", "3")
	dir := t.TempDir()
	for name, ch := range map[string]chan result{"stamped": stamped, "plain": plain} {
		r := <-ch
		if r.err != nil {
			t.Fatalf("vmstat: %v", r.err)
		}
		p := filepath.Join(dir, name+".log")
		if err := os.WriteFile(p, []byte(r.out), 0o644); err != nil {
			t.Fatal(err)
		}
		rows := dataRows(r.out)
		cfg := Config{Path: p, Target: "host1"}
		if name == "plain" {
			if _, _, err := importVmstat(t, cfg, importer.Options{}); err == nil || !strings.Contains(err.Error(), "--start") {
				t.Fatalf("no timestamps and no --start: %v", err)
			}
			cfg.Start = time.Date(2019, 5, 13, 11, 9, 36, 0, time.UTC)
			cfg.Interval = 10 * time.Second
		}
		ss, _, err := importVmstat(t, cfg, importer.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		idle := find(t, ss, "cpu_idle_pct")
		if len(idle.Points) != len(rows)-1 || idle.Unit != "%" || idle.Kind != importer.KindHost || idle.Target != "host1" {
			t.Fatalf("%s: %+v, want %d points", name, idle, len(rows)-1)
		}
		hdr := strings.Fields(strings.Split(r.out, "\n")[1])
		col := -1
		for i, h := range hdr {
			if h == "id" {
				col = i
			}
		}
		for i, p := range idle.Points {
			want, _ := strconv.ParseFloat(rows[i+1][col], 64)
			if p.V != want {
				t.Errorf("%s: point %d idle %v, file %v", name, i, p.V, want)
			}
			var wantT time.Time
			if name == "plain" {
				wantT = cfg.Start.Add(time.Duration(i+1) * cfg.Interval)
			} else {
				f := rows[i+1]
				wantT, _ = time.Parse("2006-01-02 15:04:05", f[len(f)-2]+" "+f[len(f)-1])
			}
			if !p.T.Equal(wantT) {
				t.Errorf("%s: point %d at %s, want %s", name, i, p.T, wantT)
			}
		}
	}
}

func TestZoneAbbreviationNeedsTZ(t *testing.T) {
	t.Parallel()
	log := `procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 CEST
 3  0      0 20436436 108260 3792588    0    0   448  1427 1354 3333 50  8 35  0  6 2019-05-13 11:09:36
 2  0      0 20436436 108260 3792588    0    0     0     0 5130 10655 54  6 38  0  2 2019-05-13 11:09:46
 2  0      0 20436436 108260 3792588    0    0     0     0 5130 10655 54  6 38  0  2 2019-05-13 11:09:56
`
	p := filepath.Join(t.TempDir(), "cpu.log")
	if err := os.WriteFile(p, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := importVmstat(t, Config{Path: p}, importer.Options{}); err == nil || !strings.Contains(err.Error(), "--tz") {
		t.Fatalf("CEST without --tz: %v", err)
	}
	clock, _ := importer.LoadClock("Europe/Copenhagen")
	ss, _, err := importVmstat(t, Config{Path: p}, importer.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	busy := find(t, ss, "cpu_busy_pct")
	if len(busy.Points) != 2 || !busy.Points[0].T.Equal(time.Date(2019, 5, 13, 9, 9, 46, 0, time.UTC)) || busy.Points[0].V != 62 {
		t.Errorf("cpu_busy_pct %+v", busy.Points)
	}
	jtl := filepath.Join(t.TempDir(), "x.jtl")
	os.WriteFile(jtl, []byte("timeStamp,elapsed,label\n1,2,a\n"), 0o644)
	if _, _, err := importVmstat(t, Config{Path: jtl}, importer.Options{}); err == nil || !strings.Contains(err.Error(), "JMeter") {
		t.Errorf("a JTL as vmstat: %v", err)
	}
}

func FuzzVmstat(f *testing.F) {
	f.Add([]byte(" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n 3  0      0 1 1 1    0    0   448  1427 1354 3333 50  8 35  0  6 2026-11-22 00:39:04\n"))
	f.Add([]byte(" r b us sy id\n1 2 3 4 5\n1 2 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "run")
		run, err := importer.NewRun(importer.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s := New(Config{Path: "fuzz.log", Start: time.Unix(0, 0), Interval: time.Second})
		_ = s.read(context.Background(), run, strings.NewReader(string(data)))
		_ = run.Close()
	})
}
