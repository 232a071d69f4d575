package jstat

import (
	"context"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/monitor"
)

func importJstat(t *testing.T, cfg Config) ([]core.Series, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	run, err := importer.NewRun(importer.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ierr := New(cfg).Import(context.Background(), run)
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		return nil, ierr
	}
	ss, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ss, nil
}

func series(t *testing.T, ss []core.Series, metric string) core.Series {
	t.Helper()
	for _, s := range ss {
		if s.Metric == metric {
			return s
		}
	}
	t.Fatalf("no series %s", metric)
	return core.Series{}
}

// table reads jstat output with strings.Fields: header and rows.
func table(out string) ([]string, [][]string) {
	var head []string
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 0:
		case head == nil:
			head = f
		case strings.Join(f, " ") != strings.Join(head, " "):
			rows = append(rows, f)
		}
	}
	return head, rows
}

func num(s string) float64 {
	v, _ := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	return v
}

// TestRealJstat runs a small allocating Java program and watches it with
// jstat -gc -t, -gcutil -t in a Danish locale (decimal commas) and
// -gccapacity without -t.
func TestRealJstat(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	java, err1 := exec.LookPath("java")
	jstat, err2 := exec.LookPath("jstat")
	if err1 != nil || err2 != nil {
		importertest.MissingTool(t, "no JDK (java, jstat): internal/importer/testdata/install-deps.sh apt")
	}
	jvm := exec.Command(java, "-Xmx64m", "testdata/Alloc.java", "15000")
	if err := jvm.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = jvm.Process.Kill(); _ = jvm.Wait() }()
	pid := strconv.Itoa(jvm.Process.Pid)
	deadline := time.Now().Add(20 * time.Second)
	for exec.Command(jstat, "-gc", pid).Run() != nil {
		if time.Now().After(deadline) {
			t.Skip("jstat cannot attach to the test JVM")
		}
		time.Sleep(200 * time.Millisecond)
	}
	runs := map[string][]string{
		"gc-t":        {"-gc", "-t", pid, "250", "5"},
		"gcutil-t-da": {"-J-Duser.language=da", "-J-Duser.country=DK", "-gcutil", "-t", pid, "250", "5"},
		"gccapacity":  {"-gccapacity", pid, "250", "5"},
	}
	outs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, args := range runs {
		wg.Go(func() {
			out, err := exec.Command(jstat, args...).Output()
			if err != nil {
				t.Errorf("jstat %v: %v", args, err)
			}
			mu.Lock()
			outs[name] = string(out)
			mu.Unlock()
		})
	}
	wg.Wait()
	dir := t.TempDir()
	jvmStart := time.Date(2019, 5, 13, 11, 9, 36, 0, time.UTC)
	for name, out := range outs {
		p := filepath.Join(dir, name+".log")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		head, rows := table(out)
		cfg := Config{Path: p, Target: "lar"}
		if _, err := importJstat(t, cfg); err == nil {
			t.Fatalf("%s: imported without a time reference", name)
		}
		switch {
		case strings.HasSuffix(name, "-t") || strings.Contains(name, "-t-"):
			cfg.JVMStart = jvmStart
		default:
			cfg.Start, cfg.Interval = jvmStart, 250*time.Millisecond
		}
		ss, err := importJstat(t, cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ygcCol := -1
		for i, h := range head {
			if h == "YGC" {
				ygcCol = i
			}
		}
		ygc := series(t, ss, "YGC")
		if len(ygc.Points) != len(rows) || ygc.Kind != importer.KindJVM {
			t.Fatalf("%s: %d YGC points, %d rows", name, len(ygc.Points), len(rows))
		}
		for i, pt := range ygc.Points {
			if pt.V != num(rows[i][ygcCol]) {
				t.Errorf("%s: YGC[%d] %v, file %s", name, i, pt.V, rows[i][ygcCol])
			}
			want := jvmStart.Add(time.Duration(i) * cfg.Interval)
			if head[0] == "Timestamp" {
				want = jvmStart.Add(time.Duration(num(rows[i][0]) * float64(time.Second)))
			}
			if !pt.T.Equal(want.Truncate(time.Millisecond)) {
				t.Errorf("%s: YGC[%d] at %s, want %s", name, i, pt.T, want)
			}
		}
		if name == "gcutil-t-da" {
			e := series(t, ss, "E")
			if e.Unit != "%" || e.Points[0].V != num(rows[0][3]) {
				t.Errorf("gcutil E: %+v, file %s", e, rows[0][3])
			}
		}
		if name == "gc-t" {
			hu := series(t, ss, "heap_used_bytes")
			want := (num(rows[0][3]) + num(rows[0][4]) + num(rows[0][6]) + num(rows[0][8])) * 1024
			if hu.Points[0].V != want || hu.Unit != "bytes" {
				t.Errorf("heap_used %v, want S0U+S1U+EU+OU = %v", hu.Points[0].V, want)
			}
		}
	}
}

func TestRefusesOthers(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "cpu.log")
	os.WriteFile(p, []byte(" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st\n 1 0 0 1 1 1 0 0 0 0 1 1 1 1 98 0 0\n"), 0o644)
	if _, err := importJstat(t, Config{Path: p, Start: time.Now(), Interval: time.Second}); err == nil || !strings.Contains(err.Error(), "vmstat") {
		t.Errorf("vmstat output as jstat: %v", err)
	}
}

func FuzzJstat(f *testing.F) {
	f.Add([]byte("Timestamp S0C S1C YGC\n 1,5 1 2 3\n 2.0 - 2 x\n"))
	f.Add([]byte("S0 S1 E O M CCS YGC YGCT FGC FGCT CGC CGCT GCT\n0 1 2 3 4 5 6 7 8 9 10 11 12\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run, err := importer.NewRun(importer.Options{Dir: filepath.Join(t.TempDir(), "run")})
		if err != nil {
			t.Fatal(err)
		}
		_ = New(Config{Path: "fuzz", Start: time.Unix(0, 0), Interval: time.Second}).read(context.Background(), run, strings.NewReader(string(data)))
		_ = run.Close()
	})
}
