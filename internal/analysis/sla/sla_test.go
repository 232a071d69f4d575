package sla

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	good := []struct {
		in                      string
		metric, stat, label, op string
		value                   float64
		phase                   string
	}{
		{"avg(response_time) < 200ms", ResponseTime, "avg", "", "<", 200, ""},
		{"mean(response_time) <= 1.5s", ResponseTime, "avg", "", "<=", 1500, ""},
		{`p95(response_time{label="login"}) < 300ms`, ResponseTime, "p95", "login", "<", 300, ""},
		{"median(response_time) > 500us", ResponseTime, "p50", "", ">", 0.5, ""},
		{"error_rate < 1%", ErrorRate, "", "", "<", 1, ""},
		{`error_rate{label='read'} == 0%`, ErrorRate, "", "read", "==", 0, ""},
		{"throughput >= 10/s", Throughput, "", "", ">=", 10, ""},
		{"throughput >= 600/m", Throughput, "", "", ">=", 10, ""},
		{"checks > 99%", Checks, "", "", ">", 99, ""},
		{`checks{name="cart has items"} >= 99.9%`, Checks, "", "cart has items", ">=", 99.9, ""},
		{`avg(response_time) < 200ms during "1: 2 nodes x 7 threads"`, ResponseTime, "avg", "", "<", 200, "1: 2 nodes x 7 threads"},
		{"p99.9(response_time) < 1s", ResponseTime, "p99.9", "", "<", 1000, ""},
		{"p(99.9)(response_time) < 1s", ResponseTime, "p99.9", "", "<", 1000, ""},
		{"p( 42 )(response_time) < 1s", ResponseTime, "p42", "", "<", 1000, ""},
		{`p95(response_time{label="read: GET /x"}) < 1s`, ResponseTime, "p95", "read: GET /x", "<", 1000, ""},
	}
	e, err := Parse(`error_rate{workload="read", label='GET /x'} < 1%`)
	if err != nil || e.Workload != "read" || e.Label != "GET /x" {
		t.Errorf("workload and label selector: %+v, %v", e, err)
	}
	if e, _ := Parse("p99.9(response_time) < 1s"); e.Percentile != 99.9 || e.Subject() != (Subject{Quantity: QResponseTime, Stat: StatPercentile, Percentile: 99.9}) {
		t.Errorf("p99.9: %+v %+v", e, e.Subject())
	}
	for in, want := range map[string]Subject{
		"median(response_time) < 1s":               {Quantity: QResponseTime, Stat: StatMedian},
		"p50(response_time) < 1s":                  {Quantity: QResponseTime, Stat: StatMedian},
		"mean(response_time) < 1s":                 {Quantity: QResponseTime, Stat: StatAverage},
		"max(response_time) < 1s":                  {Quantity: QResponseTime, Stat: StatMaximum},
		"min(response_time) < 1s":                  {Quantity: QResponseTime, Stat: StatMinimum},
		`error_rate{workload="w", label="l"} < 1%`: {Quantity: QErrorRate, Label: "l", Workload: "w"},
		"throughput >= 10/s":                       {Quantity: QThroughput},
		`checks{name="c"} > 99%`:                   {Quantity: QChecks, Label: "c"},
		`avg(server_time{server="a"}) < 1s`:        {Quantity: QServerTime, Stat: StatAverage, Server: "a"},
		`p99(server_time_net) < 1s`:                {Quantity: QServerTimeNet, Stat: StatPercentile, Percentile: 99},
	} {
		e, err := Parse(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := e.Subject(); got != want {
			t.Errorf("%s: subject %+v, want %+v", in, got, want)
		}
	}
	for _, c := range good {
		e, err := Parse(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if e.Metric != c.metric || e.Stat != c.stat || e.Label != c.label || e.Op != c.op || e.Value != c.value || e.Phase != c.phase {
			t.Errorf("%q parsed as %+v", c.in, e)
		}
	}
	bad := []struct{ in, want string }{
		{"", "expected a metric"},
		{`checks{label="x"} > 1%`, `only name="…" can be selected`},
		{"checks > 99", "checks is a percentage"},
		{"avg(latency) < 1ms", "expected response_time"},
		{"p100(response_time) < 1ms", "between 0 and 100"},
		{"p(0)(response_time) < 1ms", "between 0 and 100"},
		{"pct(response_time) < 1ms", `unknown metric "pct"`},
		{`error_rate{label="a" workload="b"} < 1%`, "expected , or }"},
		{"avg(response_time) 200ms", "expected a comparison"},
		{"avg(response_time) < 200", "needs a unit"},
		{"error_rate < 1", "percentage"},
		{"throughput > 5", "needs a unit"},
		{`avg(response_time) < 1s during step`, "quoted"},
		{`avg(response_time) < 1s while "x"`, "only `during"},
		{`p95(response_time{path="/"}) < 1s`, "only label"},
	}
	for _, c := range bad {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to mention %q", c.in, err, c.want)
		}
	}
}

func TestHolds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		op       string
		obs      float64
		expected bool
	}{{"<", 199, true}, {"<", 200, false}, {"<=", 200, true}, {">", 200, false}, {">=", 200, true}, {"==", 200, true}, {"!=", 200, false}} {
		e := &Expr{Op: c.op, Value: 200}
		if e.Holds(c.obs) != c.expected {
			t.Errorf("%v %s 200 = %v", c.obs, c.op, !c.expected)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"avg(response_time) < 200ms", `p95(response_time{label="x"}) <= 1s during "a"`, "error_rate < 1%", "throughput >= 10/s",
		`avg(server_time_net{server="lar-1"}) < 200ms during "s1"`, "p99(server_time) < 1s", `max(server_time{label="x"}) < 1s`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err == nil && (e.Metric == "" || e.Op == "") {
			t.Fatalf("%q parsed without metric or operator: %+v", s, e)
		}
		var pe *ParseError
		if err != nil && !errorsAs(err, &pe) {
			t.Fatalf("%q: error %v is not a ParseError", s, err)
		}
	})
}

func errorsAs(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	if ok {
		*pe = p
	}
	return ok
}

// FuzzParseRoundTrip: the parser never panics, a parsed percentile is in (0, 100),
// and what parses once parses the same again from its own text.
func FuzzParseRoundTrip(f *testing.F) {
	for _, s := range []string{"avg(response_time) < 200ms", `p(99.9)(response_time{workload="a", label="b"}) < 1s`,
		"p99.9(response_time) <= 2s during \"x\"", `error_rate{label='read: GET /x'} < 1%`, "throughput >= 10/m", "p(", "p9.(", "p()",
		`p(99.9)(server_time{server='a'}) < 1s during "x"`, "median(server_time_net) >= 5ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			return
		}
		if (e.Metric == ResponseTime || e.IsServer()) && e.Stat != "avg" && e.Stat != "min" && e.Stat != "max" && (e.Percentile <= 0 || e.Percentile >= 100) {
			t.Fatalf("%q: percentile %v", s, e.Percentile)
		}
		again, err := Parse(e.Text)
		if err != nil || *again != *e {
			t.Fatalf("%q reparsed as %+v, %v (first %+v)", s, again, err, e)
		}
	})
}

func TestServerTime(t *testing.T) {
	e, err := Parse(`p95(server_time_net{server="lar-1"}) < 200ms during "s1"`)
	if err != nil {
		t.Fatal(err)
	}
	if e.Metric != ServerTimeNet || e.Server != "lar-1" || e.Percentile != 95 || e.Value != 200 || e.Phase != "s1" || !e.IsServer() || e.Unit() != "ms" {
		t.Fatalf("parsed %+v", e)
	}
	if s := e.Subject(); s != (Subject{Quantity: QServerTimeNet, Stat: StatPercentile, Percentile: 95, Server: "lar-1"}) {
		t.Errorf("subject %+v", s)
	}
	if _, err := Parse(`avg(server_time{label="x"}) < 1s`); err == nil || !strings.Contains(err.Error(), `only server="…" can be selected`) {
		t.Errorf("a label selector on server_time: %v", err)
	}
	servers := map[string]bool{"lar-1": true, "web": false}
	for _, c := range []struct{ expr, want string }{
		{`avg(server_time) < 1s`, ""},
		{`avg(server_time{server="web"}) < 1s`, ""},
		{`avg(server_time_net{server="lar-1"}) < 1s`, ""},
		{`avg(server_time{server="api"}) < 1s`, `no attached access log of a server named "api"`},
		{`avg(server_time_net{server="web"}) < 1s`, "needs its access log joined"},
		{`avg(server_time_net) < 1s`, `"web" has none`},
	} {
		e, err := Parse(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		err = e.CheckServers(servers)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
	if err := (&Expr{Metric: ServerTime}).CheckServers(nil); err == nil {
		t.Error("server_time without an attached access log passed")
	}
}
