package dockerstats

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// No Docker engine runs where plateau is developed, so the fixtures are
// the Engine API documentation's example response and files written by
// testdata/gen.py in the formats the Engine and the docker CLI write.

// importFile imports one file; it returns the sink (whole-run figures), the
// series and run.json.
func importFile(t *testing.T, cfg Config, clock importer.Clock) (*sink, map[string]*core.Series, *rundir.Info, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	run, err := importer.NewRun(importer.Options{Dir: dir, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	src := New(cfg)
	f, err := os.Open(cfg.Path)
	if err != nil {
		t.Fatal(err)
	}
	k, ierr := src.read(context.Background(), run, f)
	f.Close()
	if ierr == nil {
		ierr = k.finish(cfg.Path)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	if ierr != nil {
		return nil, nil, nil, ierr
	}
	ss, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*core.Series{}
	for i := range ss {
		out[ss[i].Key()] = &ss[i]
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k, out, info, nil
}

// oracle computes the docker CLI's figures from one Engine API object read
// into maps.
type oracle struct {
	t                                 time.Time
	name                              string
	cpu                               float64 // NaN without precpu
	used, limit, rx, tx, rd, wr, pids float64
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return 0
		}
		v = mm[p]
	}
	f, _ := v.(float64)
	return f
}

func oracleObjects(t *testing.T, path string) []oracle {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var out []oracle
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		o := oracle{cpu: math.NaN()}
		o.t, err = time.Parse(time.RFC3339Nano, m["read"].(string))
		if err != nil {
			t.Fatal(err)
		}
		o.name, _ = m["name"].(string)
		o.name = strings.TrimPrefix(o.name, "/")
		if pre := num(m, "precpu_stats", "system_cpu_usage"); pre > 0 {
			d := num(m, "cpu_stats", "cpu_usage", "total_usage") - num(m, "precpu_stats", "cpu_usage", "total_usage")
			s := num(m, "cpu_stats", "system_cpu_usage") - pre
			o.cpu = d / s * num(m, "cpu_stats", "online_cpus") * 100
		}
		usage := num(m, "memory_stats", "usage")
		stats := m["memory_stats"].(map[string]any)["stats"].(map[string]any)
		if v, ok := stats["total_inactive_file"]; ok {
			o.used = usage - v.(float64)
		} else {
			o.used = usage - stats["inactive_file"].(float64)
		}
		o.limit = num(m, "memory_stats", "limit")
		for _, n := range m["networks"].(map[string]any) {
			o.rx += n.(map[string]any)["rx_bytes"].(float64)
			o.tx += n.(map[string]any)["tx_bytes"].(float64)
		}
		if l, ok := m["blkio_stats"].(map[string]any)["io_service_bytes_recursive"].([]any); ok {
			for _, e := range l {
				e := e.(map[string]any)
				switch strings.ToLower(e["op"].(string)) {
				case "read":
					o.rd += e["value"].(float64)
				case "write":
					o.wr += e["value"].(float64)
				}
			}
		}
		o.pids = num(m, "pids_stats", "current")
		out = append(out, o)
	}
	return out
}

// at is the value of a series at t.
func at(s *core.Series, t time.Time) (float64, bool) {
	if s == nil {
		return 0, false
	}
	for _, p := range s.Points {
		if p.T.Equal(t.Truncate(time.Millisecond)) {
			return p.V, true
		}
	}
	return 0, false
}

// approx allows for the monitor format, which keeps six significant digits.
func approx(a, b float64) bool { return math.Abs(a-b) <= 5e-6*math.Max(1e-3, math.Abs(b)) }

func TestEngineAgainstCLIFormulas(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file   string
		target string
	}{{"engine-docs-example.json", "docs"}, {"engine-v2-stream.json", ""}} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", c.file)
			k, ss, info, err := importFile(t, Config{Path: path, Target: c.target}, importer.Clock{})
			if err != nil {
				t.Fatal(err)
			}
			objs := oracleObjects(t, path)
			prev := map[string]oracle{}
			var noCPU int64
			for _, o := range objs {
				name := o.name
				if c.target != "" {
					name = c.target
				}
				checks := []struct {
					metric string
					want   float64
				}{{"cpu_pct", o.cpu}, {"memory_working_set_bytes", o.used}, {"memory_limit_bytes", o.limit},
					{"memory_pct", o.used / o.limit * 100}, {"net_rx_bytes", o.rx}, {"net_tx_bytes", o.tx}, {"pids", o.pids}}
				if o.rd+o.wr > 0 {
					checks = append(checks, struct {
						metric string
						want   float64
					}{"io_read_bytes", o.rd}, struct {
						metric string
						want   float64
					}{"io_write_bytes", o.wr})
				}
				if p, ok := prev[name]; ok {
					dt := o.t.Sub(p.t).Seconds()
					checks = append(checks, struct {
						metric string
						want   float64
					}{"net_rx_bytes_per_s", (o.rx - p.rx) / dt}, struct {
						metric string
						want   float64
					}{"io_write_bytes_per_s", (o.wr - p.wr) / dt})
				}
				prev[name] = o
				if math.IsNaN(o.cpu) {
					noCPU++
					if _, ok := at(ss[name+"/cpu_pct"], o.t); ok {
						t.Errorf("%s %v: a CPU %% without a previous reading", name, o.t)
					}
					checks = checks[1:]
				}
				for _, ch := range checks {
					got, ok := at(ss[name+"/"+ch.metric], o.t)
					if !ok || !approx(got, ch.want) {
						t.Errorf("%s %s at %v: %v (found %v), want %v", name, ch.metric, o.t, got, ok, ch.want)
					}
				}
			}
			if k.noCPU != noCPU {
				t.Errorf("%d readings without CPU, oracle %d", k.noCPU, noCPU)
			}
			for _, n := range info.Notes {
				if strings.Contains(n, "whole test period") {
					t.Errorf("timed series described as whole-run figures: %q", n)
				}
			}
		})
	}
}

// tableOracle reads the CLI's table with a regular expression and a unit
// table of its own: per container, the CPU %, memory used and the I/O
// counters of every reading.
type tableRow struct {
	cpu, used, limit, memPct, rx, tx, rd, wr, pids float64
}

var units = map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

func size(t *testing.T, s string) float64 {
	t.Helper()
	m := regexp.MustCompile(`^([0-9.]+)([A-Za-z]+)$`).FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		t.Fatalf("size %q", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	u, ok := units[m[2]]
	if !ok {
		t.Fatalf("unit %q", m[2])
	}
	return v * u
}

func pair(t *testing.T, s string) (float64, float64) {
	a, b, _ := strings.Cut(s, " / ")
	return size(t, a), size(t, b)
}

func tableOracle(t *testing.T, path string) map[string][]tableRow {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`).ReplaceAllString(string(b), "")
	out := map[string][]tableRow{}
	sep := regexp.MustCompile(` {2,}`)
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		f := sep.Split(strings.TrimSpace(line), -1)
		if len(f) != 8 || f[0] == "CONTAINER ID" {
			continue
		}
		var r tableRow
		r.cpu, _ = strconv.ParseFloat(strings.TrimSuffix(f[2], "%"), 64)
		r.used, r.limit = pair(t, f[3])
		r.memPct, _ = strconv.ParseFloat(strings.TrimSuffix(f[4], "%"), 64)
		r.rx, r.tx = pair(t, f[5])
		r.rd, r.wr = pair(t, f[6])
		r.pids, _ = strconv.ParseFloat(f[7], 64)
		out[f[1]] = append(out[f[1]], r)
	}
	return out
}

func checkWhole(t *testing.T, k *sink, want map[string][]tableRow) {
	t.Helper()
	if len(k.whole) != len(want) {
		t.Fatalf("%d containers, want %d", len(k.whole), len(want))
	}
	for name, rows := range want {
		w := k.whole[name]
		if w == nil {
			t.Fatalf("container %s missing", name)
		}
		if w.readings != int64(len(rows)) {
			t.Errorf("%s: %d readings, want %d", name, w.readings, len(rows))
		}
		var cpu, used, pids []float64
		for _, r := range rows {
			cpu, used, pids = append(cpu, r.cpu), append(used, r.used), append(pids, r.pids)
		}
		for _, c := range []struct {
			what string
			got  *stat
			vals []float64
		}{{"cpu", &w.cpu, cpu}, {"memory", &w.mem, used}, {"pids", &w.pids, pids}} {
			v := append([]float64(nil), c.vals...)
			sort.Float64s(v)
			var sum float64
			for _, x := range v {
				sum += x
			}
			if !approx(c.got.min, v[0]) || !approx(c.got.max, v[len(v)-1]) || !approx(c.got.mean(), sum/float64(len(v))) {
				t.Errorf("%s %s: min %v mean %v max %v, want %v %v %v", name, c.what, c.got.min, c.got.mean(), c.got.max,
					v[0], sum/float64(len(v)), v[len(v)-1])
			}
		}
		first, last := rows[0], rows[len(rows)-1]
		if !approx(w.rx.incr, last.rx-first.rx) || !approx(w.tx.incr, last.tx-first.tx) || !approx(w.blkWrt.incr, last.wr-first.wr) {
			t.Errorf("%s: network +%v/+%v, write +%v; want +%v/+%v, +%v", name, w.rx.incr, w.tx.incr, w.blkWrt.incr,
				last.rx-first.rx, last.tx-first.tx, last.wr-first.wr)
		}
	}
}

func TestCLITableWholeRun(t *testing.T) {
	t.Parallel()
	want := tableOracle(t, "testdata/cli-table.log")
	for _, f := range []string{"cli-table.log", "cli-table-tty.log", "cli-json.log"} {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			k, ss, info, err := importFile(t, Config{Path: filepath.Join("testdata", f)}, importer.Clock{})
			if err != nil {
				t.Fatal(err)
			}
			checkWhole(t, k, want)
			if len(ss) != 0 {
				t.Errorf("%d series from a file without times", len(ss))
			}
			stated := 0
			for _, n := range info.Notes {
				if strings.Contains(n, "whole test period") || strings.Contains(n, "whole run:") {
					stated++
				}
			}
			if stated != 1+len(want) {
				t.Errorf("notes %q: want the whole-run statement and one line per container", info.Notes)
			}
		})
	}
}

func TestCLIJSONWithTimes(t *testing.T) {
	t.Parallel()
	path := "testdata/cli-json-timed.log"
	_, ss, _, err := importFile(t, Config{Path: path}, importer.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	want := tableOracle(t, "testdata/cli-table.log")
	for name, rows := range want {
		s := ss[name+"/memory_working_set_bytes"]
		if s == nil || len(s.Points) != len(rows) {
			t.Fatalf("%s: series %v, want %d points", name, s, len(rows))
		}
		for i, r := range rows {
			if !approx(s.Points[i].V, r.used) {
				t.Errorf("%s reading %d: %v, want %v", name, i, s.Points[i].V, r.used)
			}
		}
	}
	// Times without a zone need --tz.
	b, _ := os.ReadFile(path)
	noZone := strings.ReplaceAll(string(b), "+00:00 {", " {")
	p := filepath.Join(t.TempDir(), "nozone.log")
	if err := os.WriteFile(p, []byte(noZone), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := importFile(t, Config{Path: p}, importer.Clock{}); err == nil || !strings.Contains(err.Error(), "--tz") {
		t.Errorf("times without a zone: %v, want an error naming --tz", err)
	}
	if _, ss, _, err := importFile(t, Config{Path: p}, importer.Clock{Loc: time.UTC}); err != nil || len(ss) == 0 {
		t.Errorf("with --tz UTC: %v, %d series", err, len(ss))
	}
}

func TestMalformedAndRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b, _ := os.ReadFile("testdata/cli-table.log")
	lines := strings.SplitAfter(string(b), "\n")
	lines = append(lines[:4], append([]string{"091c9a0c0d2e   lar   lots%   1MiB / 2GiB   1%   1B / 1B   1B / 1B   1\n",
		"truncated row\n"}, lines[4:]...)...)
	table := write("table.log", strings.Join(lines, ""))
	eb, _ := os.ReadFile("testdata/engine-v2-stream.json")
	el := strings.SplitAfter(string(eb), "\n")
	el[3] = el[3][:100] + "\n"
	engine := write("engine.json", strings.Join(el, ""))
	for _, c := range []struct {
		path  string
		lines []string
	}{{table, []string{":5:", ":6:"}}, {engine, []string{":4:"}}} {
		dirRun := filepath.Join(t.TempDir(), "run")
		run, err := importer.NewRun(importer.Options{Dir: dirRun})
		if err != nil {
			t.Fatal(err)
		}
		if err := New(Config{Path: c.path}).Import(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
		log, _ := os.ReadFile(filepath.Join(dirRun, rundir.ImportLogFile))
		for _, l := range c.lines {
			if !strings.Contains(string(log), c.path+l) {
				t.Errorf("import.log lacks %s%s:\n%s", c.path, l, log)
			}
		}
	}
	for _, c := range []struct{ body, want string }{
		{"timeStamp,elapsed,label\n1557738614000,12,GET /\n", "plateau import jmeter"},
		{"procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----\n r  b   swpd   free\n", "plateau import vmstat"},
		{`{"hello":"world"}` + "\n", "docker stats output"},
		{"", "empty file"},
	} {
		p := write("other.txt", c.body)
		if _, _, _, err := importFile(t, Config{Path: p}, importer.Clock{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %q", c.body, err, c.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want float64
	}{{"916B", 916}, {"147kB", 147e3}, {"4.11MB", 4.11e6}, {"5.629MiB", 5.629 * (1 << 20)}, {"1.952GiB", 1.952 * (1 << 30)},
		{"0B", 0}, {"2KB", 2000}, {"1.5TiB", 1.5 * (1 << 40)}} {
		got, err := parseSize(c.in)
		if err != nil || !approx(got, c.want) {
			t.Errorf("parseSize(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "MiB", "12XB", "-1B", "1.2.3MB", "NaNB"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}

// FuzzParse feeds arbitrary bytes to the format detection and every
// line decoder: never a panic, never a negative figure.
func FuzzParse(f *testing.F) {
	for _, n := range []string{"cli-table-tty.log", "cli-json-timed.log", "engine-v2-stream.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 900)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = detect(data)
		tp, _ := importer.NewTimeParser("iso8601", importer.Clock{Loc: time.UTC})
		sc := bufio.NewScanner(bytes.NewReader(stripANSI(data, nil)))
		for sc.Scan() {
			line := sc.Text()
			cols := splitColumns(line)
			if len(cols) >= 6 {
				r := newReading()
				if fill(&r, cols[1], cols[2], cols[3], cols[4], cols[5], cols[len(cols)-1]) == nil {
					for _, v := range []float64{r.cpu, r.memUsed, r.memLimit, r.netRx, r.blkWrite, r.pids} {
						if v < 0 {
							t.Fatalf("negative figure from %q", line)
						}
					}
				}
			}
			var e engineStats
			if json.Unmarshal([]byte(line), &e) == nil {
				if r, _, err := engineReading(&e, &tp); err == nil && (r.cpu < 0 || r.memUsed < 0) {
					t.Fatalf("negative figure from %q", line)
				}
			}
		}
	})
}
