package monitor

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fileCollector reads a number from a file: deleting the file loses the
// target, writing it again brings it back.
type fileCollector struct{ path string }

func (f *fileCollector) Collect(_ context.Context, b *Batch) error {
	raw, err := os.ReadFile(f.path)
	if err != nil {
		return err
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
	if err != nil {
		return err
	}
	b.Add("value", "", v)
	b.Add(MetricName("value", "file", "a b,c"), "bytes", v*2)
	return nil
}

func (f *fileCollector) Close() error { return nil }

func fileKind() Kind {
	return Kind{
		Open: func(_ context.Context, cfg TargetConfig, _ Env) (Collector, error) {
			if _, err := os.Stat(cfg.Path); err != nil {
				return nil, err
			}
			return &fileCollector{path: cfg.Path}, nil
		},
		Validate: func(cfg TargetConfig) error {
			if cfg.Path == "" {
				return errors.New("path is required")
			}
			return nil
		},
	}
}

func TestSessionGapAndReadBack(t *testing.T) {
	t.Parallel()
	src := filepath.Join(t.TempDir(), "v")
	write := func(v string) {
		if err := os.WriteFile(src, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("7")
	dir := t.TempDir()
	s, err := Start(context.Background(), Options{
		Dir: dir, Interval: 100 * time.Millisecond,
		Targets: []TargetConfig{
			{Kind: "file", Name: "svc one", Path: src},
			{Kind: "file", Name: "svc one", Path: src},             // duplicate name
			{Kind: "file", Name: "missing", Path: src + ".absent"}, // cannot open
			{Kind: "gpu", Name: "g"},                               // unknown kind
			{Kind: "file", Name: "fast", Path: src, Interval: time.Millisecond},
		},
		Kinds: map[string]Kind{"file": fileKind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	st := s.Status()
	if !st[0].Started {
		t.Fatalf("first target: %+v", st[0])
	}
	for i, want := range []string{"", "duplicate target name", "no such file", "unknown kind", "below the minimum"} {
		if i > 0 && (st[i].Started || !strings.Contains(st[i].Error, want)) {
			t.Errorf("target %d: %+v, want error with %q", i, st[i], want)
		}
	}
	time.Sleep(250 * time.Millisecond)
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(s.Status()[0].Gaps) == 1 })
	write("9")
	waitFor(t, func() bool { return s.Status()[0].Gaps[0].End != nil })
	time.Sleep(150 * time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}

	// A run killed mid-write leaves torn last lines; Read ignores them.
	csvPath := filepath.Join(dir, SubDir, "svc_one.csv")
	appendTo(t, csvPath, "2026-11-21T10:00:00.000Z,svc one,file,val")
	appendTo(t, filepath.Join(dir, SubDir, EventsFile), `{"time":"2026-11-21T10:00:00Z","target":"svc one","ki`)

	series, status, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != 5 || !status[0].Started || status[0].Samples == 0 || status[1].Error == "" {
		t.Fatalf("status read back: %+v", status)
	}
	if g := status[0].Gaps; len(g) != 1 || g[0].End == nil || !g[0].End.After(g[0].Start) || !strings.Contains(g[0].Error, "no such file") {
		t.Errorf("gaps read back: %+v", g)
	}
	if len(series) != 2 {
		t.Fatalf("%d series, want value and value{file=a_b_c}", len(series))
	}
	if series[1].Metric != "value{file=a_b_c}" || series[1].Unit != "bytes" || series[0].Target != "svc one" || series[0].Kind != "file" {
		t.Errorf("series: %s %s %s %s", series[1].Metric, series[1].Unit, series[0].Target, series[0].Kind)
	}
	var seven, nine, nan int
	for i, p := range series[0].Points {
		switch {
		case math.IsNaN(p.V):
			nan++
		case p.V == 7:
			seven++
		case p.V == 9:
			nine++
		}
		if i > 0 && p.T.Before(series[0].Points[i-1].T) {
			t.Errorf("points out of order at %d", i)
		}
	}
	if seven < 2 || nan != 1 || nine < 1 {
		t.Errorf("points: %d sevens, %d NaN, %d nines", seven, nan, nine)
	}

	// A malformed line in the middle is an error naming file and line.
	raw, _ := os.ReadFile(csvPath)
	lines := strings.Split(string(raw), "\n")
	lines[2] = "garbage"
	if err := os.WriteFile(csvPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "svc_one.csv:3") {
		t.Errorf("corrupt line: err = %v", err)
	}
}

func TestReadWithoutMonitorDir(t *testing.T) {
	t.Parallel()
	series, status, err := Read(t.TempDir())
	if err != nil || series != nil || status != nil {
		t.Errorf("empty run: %v %v %v", series, status, err)
	}
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{
		0: "0", 42: "42", -3: "-3", 1234567890123: "1234567890123", 0.5: "0.5",
		33.333333333333336: "33.3333", 1234.56789: "1234.57", 0.000012345: "1.2345e-05",
		1e20: "1e+20", math.NaN(): "NaN", math.Inf(1): "Inf",
	} {
		if got := string(appendValue(nil, v)); got != want {
			t.Errorf("appendValue(%v) = %q, want %q", v, got, want)
		}
		if math.IsNaN(v) {
			continue
		}
		back, err := strconv.ParseFloat(want, 64)
		if err != nil || (v != 0 && math.Abs(back-v)/math.Abs(v) > 1e-5) {
			t.Errorf("%q parses back to %v (%v), from %v", want, back, err, v)
		}
	}
}

func TestCSVField(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"plain": "plain", "a,b": `"a,b"`, `q"x`: `"q""x"`, " lead": `" lead"`, "": ""} {
		if got := string(appendCSVField(nil, in)); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
	if got := MetricName("m", "a", `x="1", y`, "b", "c"); got != "m{a=x__1___y,b=c}" {
		t.Errorf("MetricName = %q", got)
	}
	if Stem("db/primary 1") != "db_primary_1" || Stem(".hidden") != "t.hidden" {
		t.Errorf("Stem: %q %q", Stem("db/primary 1"), Stem(".hidden"))
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("timed out")
}

// TestDefaultRole: a host target reading this machine is the load
// generator's host, a database monitor a database, the rest the system
// under test; a plan's role wins.
func TestDefaultRole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  TargetConfig
		want Role
	}{
		{TargetConfig{Kind: KindHost}, "generator"},
		{TargetConfig{Kind: KindHost, Path: "/host/proc"}, "system_under_test"},
		{TargetConfig{Kind: KindPostgres}, "database"},
		{TargetConfig{Kind: KindProcess}, "system_under_test"},
		{TargetConfig{Kind: KindHost, Role: "system_under_test"}, "system_under_test"},
	} {
		if got := DefaultRole(c.cfg); got != c.want {
			t.Errorf("%+v: role %q, want %q", c.cfg, got, c.want)
		}
	}
}
