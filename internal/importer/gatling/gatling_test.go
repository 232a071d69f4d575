package gatling

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// statsNode is one node of Gatling's js/stats.json: the run ("GROUP"
// Global Information), groups and requests, nested by contents.
type statsNode struct {
	Type     string               `json:"type"`
	Name     string               `json:"name"`
	Path     string               `json:"path"`
	Stats    gatlingStats         `json:"stats"`
	Contents map[string]statsNode `json:"contents"`
}

type triple struct {
	Total, OK, KO json.Number
}

type gatlingStats struct {
	N       triple `json:"numberOfRequests"`
	Min     triple `json:"minResponseTime"`
	Max     triple `json:"maxResponseTime"`
	Mean    triple `json:"meanResponseTime"`
	P1      triple `json:"percentiles1"` // 50
	P2      triple `json:"percentiles2"` // 75
	P3      triple `json:"percentiles3"` // 95
	P4      triple `json:"percentiles4"` // 99
	PerSec  triple `json:"meanNumberOfRequestsPerSecond"`
	Summary string `json:"name"`
}

func num(t *testing.T, n json.Number) float64 {
	t.Helper()
	v, err := n.Float64()
	if err != nil {
		t.Fatalf("stats.json number %q: %v", n, err)
	}
	return v
}

// readStats flattens stats.json into request path → stats, the run's
// under "TOTAL".
func readStats(t *testing.T, path string) map[string]gatlingStats {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root statsNode
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	out := map[string]gatlingStats{"TOTAL": root.Stats}
	var walk func(n statsNode)
	walk = func(n statsNode) {
		for _, c := range n.Contents {
			if c.Type == "REQUEST" {
				out[c.Path] = c.Stats
			}
			walk(c)
		}
	}
	walk(root)
	return out
}

func importLog(t *testing.T, cfg Config, opt importer.Options) (*analysis.Dataset, error) {
	t.Helper()
	return importertest.Import(t, opt, New(cfg))
}

// TestMatchesGatlingStats imports a public Gatling 3.5.1 log and checks
// every request name and the total against the report Gatling made of it.
func TestMatchesGatlingStats(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	const fx = "testdata/apicurio-3.5.1"
	d, err := importLog(t, Config{Path: filepath.Join(fx, "simulation.log.gz")}, importer.Options{Dir: dir, DerivePhases: true, MinPhase: 30e9})
	if err != nil {
		t.Fatal(err)
	}
	want := readStats(t, filepath.Join(fx, "stats.json"))
	s := analysis.Summarize(d, nil)
	if s.PercentileMethod != importer.GatlingFigures.Method {
		t.Errorf("percentile_method %q", s.PercentileMethod)
	}
	compared := 0
	for _, row := range s.Labels {
		g, ok := want[row.Label]
		if !ok {
			t.Errorf("label %q not in stats.json", row.Label)
			continue
		}
		delete(want, row.Label)
		for _, c := range []struct {
			what      string
			ours, gat float64
			tol       float64
		}{
			{"count", float64(row.Samples), num(t, g.N.Total), 0},
			{"KO", float64(row.Errors), num(t, g.N.KO), 0},
			{"min", row.MinMs, num(t, g.Min.Total), 0},
			{"max", row.MaxMs, num(t, g.Max.Total), 0},
			// Gatling prints the mean and the percentiles in whole ms.
			{"mean", row.MeanMs, num(t, g.Mean.Total), 0.5 + 0.0005},
			{"p50", row.P50Ms, num(t, g.P1.Total), 1},
			{"p95", row.P95Ms, num(t, g.P3.Total), 1},
			{"p99", row.P99Ms, num(t, g.P4.Total), 1},
			// summary.json keeps three decimals.
			{"rate", row.ThroughputRPS, num(t, g.PerSec.Total), 0.0005 + 1e-9},
		} {
			compared++
			if math.Abs(c.ours-c.gat) > c.tol {
				t.Errorf("%s %s: %v, Gatling %v", row.Label, c.what, c.ours, c.gat)
			}
		}
	}
	for name := range want {
		t.Errorf("stats.json's %q not in the report", name)
	}
	if compared != 9*10 {
		t.Errorf("%d figures compared, want 90 (9 names and the total)", compared)
	}
	// The rate's denominator exactly: Gatling's 3.7765625 = 2417 / 640 s.
	var info rundir.Info
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	if info.Figures == nil || len(info.Figures.Labels) == 0 {
		t.Fatal("no source figures in run.json")
	}
	for _, l := range info.Figures.Labels {
		if l.SpanS != 640 {
			t.Errorf("%s: span %v s, Gatling's run lasted 640 s", l.Label, l.SpanS)
		}
	}
	// The KOs are "status.find.in(200,…,304), found 401": 4xx, 401.
	if got := s.Errors.ByClass[core.ErrHTTP4xx.String()]; got != 1282 {
		t.Errorf("4xx: %d, want 1282 (%v)", got, s.Errors.ByClass)
	}
	if got := s.Errors.ByStatus["401"]; got != 1282 {
		t.Errorf("status 401: %d, want 1282 (%v)", got, s.Errors.ByStatus)
	}
	// Users from USER START/END: the simulation ran 2.
	if u := maxUsers(d); u != 2 {
		t.Errorf("max users %d, the simulation ran 2", u)
	}
}

func maxUsers(d *analysis.Dataset) int {
	m := 0
	for _, u := range d.Users {
		m = max(m, u.Total)
	}
	return m
}

// write writes lines as a log in a temporary directory.
func write(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "simulation.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLayouts reads the record layouts of Gatling's versions: 3.4+, 3.0–3.3
// (a user id in USER) and 2.x (scenario and user id in REQUEST and GROUP).
func TestLayouts(t *testing.T) {
	t.Parallel()
	const t0 = 1_700_000_000_000
	ms := func(d int) string { return fmt.Sprint(t0 + d) }
	cases := map[string][]string{
		"3.4+": {
			"RUN\tsim.Shop\tshop\t" + ms(0) + "\t \t3.9.5",
			"USER\tbuyers\tSTART\t" + ms(10),
			"REQUEST\t\thome\t" + ms(20) + "\t" + ms(32) + "\tOK\t ",
			"REQUEST\tcheckout\tpay\t" + ms(40) + "\t" + ms(90) + "\tKO\tstatus.find.in(200,201), but actually found 503",
			"REQUEST\tcheckout,card\tauth\t" + ms(100) + "\t" + ms(107) + "\tKO\ti.n.c.ConnectTimeoutException: connection timed out: /127.0.0.1:1",
			"GROUP\tcheckout\t" + ms(40) + "\t" + ms(110) + "\t57\tKO",
			"USER\tbuyers\tEND\t" + ms(120),
		},
		"3.0": {
			"RUN\tsim.Shop\tshop\t" + ms(0) + "\t \t3.0.3",
			"USER\tbuyers\t1\tSTART\t" + ms(10) + "\t" + ms(10),
			"REQUEST\t1\t\thome\t" + ms(20) + "\t" + ms(32) + "\tOK\t ",
			"REQUEST\t1\tcheckout\tpay\t" + ms(40) + "\t" + ms(90) + "\tKO\tstatus.find.in(200,201), but actually found 503",
			"REQUEST\t1\tcheckout,card\tauth\t" + ms(100) + "\t" + ms(107) + "\tKO\ti.n.c.ConnectTimeoutException: connection timed out: /127.0.0.1:1",
			"GROUP\t1\tcheckout\t" + ms(40) + "\t" + ms(110) + "\t57\tKO",
			"USER\tbuyers\t1\tEND\t" + ms(10) + "\t" + ms(120),
		},
		"2.x": {
			"RUN\tShop\tshop\t" + ms(0) + "\tdescription\t2.0",
			"USER\tbuyers\t1\tSTART\t" + ms(10) + "\t0",
			"REQUEST\tbuyers\t1\t\thome\t" + ms(20) + "\t" + ms(32) + "\tOK\t ",
			"REQUEST\tbuyers\t1\tcheckout\tpay\t" + ms(40) + "\t" + ms(90) + "\tKO\tstatus.find.in(200,201), but actually found 503",
			"REQUEST\tbuyers\t1\tcheckout,card\tauth\t" + ms(100) + "\t" + ms(107) + "\tKO\ti.n.c.ConnectTimeoutException: connection timed out: /127.0.0.1:1",
			"GROUP\tbuyers\t1\tcheckout\t" + ms(40) + "\t" + ms(110) + "\t57\tKO",
			"USER\tbuyers\t1\tEND\t" + ms(10) + "\t" + ms(120),
		},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := importLog(t, Config{Path: write(t, lines...)}, importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			s := analysis.Summarize(d, nil)
			got := map[string]core.LabelStats{}
			for _, r := range s.Labels {
				if !r.Transaction {
					got[r.Label] = r
				}
			}
			for _, w := range []struct {
				label  string
				n, err int64
				ms     float64
			}{{"home", 1, 0, 12}, {"checkout / pay", 1, 1, 50}, {"checkout / card / auth", 1, 1, 7}, {"TOTAL", 3, 2, 23}} {
				r, ok := got[w.label]
				if !ok {
					t.Errorf("no label %q in %v", w.label, s.Labels)
					continue
				}
				if r.Samples != w.n || r.Errors != w.err || r.MeanMs != w.ms {
					t.Errorf("%s: %d samples, %d errors, mean %v; want %d, %d, %v", w.label, r.Samples, r.Errors, r.MeanMs, w.n, w.err, w.ms)
				}
			}
			if s.Errors.ByClass[core.ErrHTTP5xx.String()] != 1 || s.Errors.ByClass[core.ErrTimeout.String()] != 1 {
				t.Errorf("classes %v: want one 5xx and one timeout", s.Errors.ByClass)
			}
			// The group is a transaction: its cumulated time, not in the total.
			var tx bool
			for _, r := range s.Labels {
				if r.Label == "checkout" && r.Transaction {
					tx = true
					if r.Samples != 1 || r.MeanMs != 57 || r.Errors != 1 {
						t.Errorf("group: %d samples, mean %v, %d errors; want 1, 57 ms, 1", r.Samples, r.MeanMs, r.Errors)
					}
				}
			}
			if !tx {
				t.Errorf("no transaction label for the group: %v", s.Labels)
			}
			if u := maxUsers(d); u != 1 {
				t.Errorf("max users %d, want 1", u)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		msg    string
		class  core.ErrorClass
		status int32
	}{
		{"status.find.is(200), but actually found 404", core.ErrHTTP4xx, 404},
		{"status.find.in(200,201,202,203,204,205,206,207,208,209,304), found 500", core.ErrHTTP5xx, 500},
		{"status.find.in(200,201,202,203,204,205,206,207,208,209,304), found 401", core.ErrHTTP4xx, 401},
		{"bodyString.find.is(ok), but actually found 404", core.ErrCheck, 0},
		{"status.find.is(201), but actually found 200", core.ErrCheck, 200},
		{"jsonPath($.id).find.exists, found nothing", core.ErrCheck, 0},
		{"i.n.h.s.SslHandshakeTimeoutException: handshake timed out after 10000ms", core.ErrTimeout, 0},
		{"j.n.ConnectException: Connection refused: /127.0.0.1:8080", core.ErrRefused, 0},
		{"i.g.h.c.i.RequestTimeoutException: Request timeout to 127.0.0.1/127.0.0.1:8080 after 60000 ms", core.ErrTimeout, 0},
		{"j.i.IOException: Premature close", core.ErrCheck, 0},
		{"i.n.c.u.c.PrematureChannelClosureException", core.ErrReset, 0},
		{"j.n.UnknownHostException: shop.invalid", core.ErrDNS, 0},
		{"j.s.c.CertificateException: No subject alternative names", core.ErrTLS, 0},
	} {
		class, st := Classify(c.msg)
		if class != c.class || st != c.status {
			t.Errorf("%q: %v %d, want %v %d", c.msg, class, st, c.class, c.status)
		}
	}
}

// TestRefusals: other tools' files are refused with what they look like
// and the import that reads them; so is Gatling's binary log.
func TestRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]struct {
		body string
		want string
	}{
		"jtl":     {"timeStamp,elapsed,label,responseCode,success\n1700000000000,5,a,200,true\n", "plateau import jmeter"},
		"k6csv":   {"metric_name,timestamp,metric_value,check,error\nhttp_reqs,1700000000,1.000000,,\n", "plateau import k6"},
		"stats":   {"{\n  \"type\": \"GROUP\",\n\"name\": \"All Requests\",\n\"stats\": {\"numberOfRequests\": {}, \"meanResponseTime\": {}}}", "import the run's simulation.log"},
		"binary":  {"\x00\x00\x00\x053.13.1\x00\x00\x00\x1bcomputerdatabase.BasicSimulation\x00\x00\x01\x8c", "Gatling 3.12 or later"},
		"garbage": {"hello world\n", `first line "hello world"`},
	}
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := importLog(t, Config{Path: p}, importer.Options{})
		if err == nil || !strings.Contains(err.Error(), f.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming the file and %q", name, err, f.want)
		}
	}
}

// TestMalformed: bad lines are counted with file and line, the rest kept.
func TestMalformed(t *testing.T) {
	t.Parallel()
	p := write(t,
		"RUN\tsim.Shop\tshop\t1700000000000\t \t3.9.5",
		"REQUEST\t\thome\t1700000000020\t1700000000032\tOK\t ",
		"REQUEST\t\thome\tyesterday\t1700000000032\tOK\t ",
		"REQUEST\t\thome\t1700000000050\t1700000000040\tOK\t ",
		"BOGUS\tline",
		"REQUEST\t\thome\t1700000000060\t1700000000070\tOK\t ")
	dir := filepath.Join(t.TempDir(), "run")
	d, err := importLog(t, Config{Path: p}, importer.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if st := d.Total.Stats("", false, 0); st.Samples != 2 {
		t.Errorf("%d samples, want 2", st.Samples)
	}
	log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{p + ":3", p + ":4", p + ":5", "3 malformed"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("import.log lacks %q:\n%s", w, log)
		}
	}
	// A log with no request at all is an error, not an empty run.
	if _, err := importLog(t, Config{Path: write(t, "RUN\tsim.Shop\tshop\t1700000000000\t \t3.9.5")}, importer.Options{}); err == nil ||
		!strings.Contains(err.Error(), "no REQUEST") {
		t.Errorf("empty log: %v", err)
	}
}
