package jmeter

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

// TestFeatures converts testdata/plans/features.jmx, one of each element,
// and checks what became of each: its status in the report and what the
// plan says for it.
func TestFeatures(t *testing.T) {
	src := filepath.Join("testdata", "plans", "features.jmx")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	root, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(root, Options{Source: src})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	plan := string(b)
	if _, err := convert.Verify(p, "plan.yaml", filepath.Dir(src)); err != nil {
		t.Fatalf("plan does not load: %v\n%s", err, plan)
	}
	status := map[string]convert.Status{}
	for _, it := range rep.Items {
		status[it.Name] = it.Status
	}
	for _, tc := range []struct {
		element string
		want    convert.Status
		yaml    string // a line the plan must hold for it
	}{
		{"defaults", convert.Converted, `target: "http://${env.host:-127.0.0.1}:8080"`},
		{"headers", convert.Converted, `X-Tenant: "${tenant}"`},
		{"basic auth", convert.Converted, `Authorization: "Basic ${env.BASIC_AUTH}"`},
		{"prepare", convert.Converted, "setup:"},
		{"admin token value", convert.Converted, `admin_token: {left: token=, right: ;, default: none}`},
		{"clean up", convert.Converted, "teardown:"},
		{"steps", convert.Converted, "- users: 30"},
		{"shoppers", convert.Converted, "on_fail: next_iteration"},
		{"accounts", convert.Converted, `body: "u=${accounts.login}"`},
		{"think", convert.Converted, "think: uniform(500ms, 1500ms)"},
		{"once", convert.Partial, ""},
		{"session cookie", convert.Converted, "sid: {cookie: SID}"},
		{"browse", convert.Converted, "name: browse"},
		{"catalogue", convert.Converted, `url: "/catalogue?q=${urlencode(tenant)}&r=${randomInt(1, 100)}&id=${__uuid}"`},
		{"all ids", convert.Converted, `ids: {json: "$.items[*].id", all: true`},
		{"csrf", convert.Converted, `csrf: {css: "input[name=csrf]", attr: value}`},
		{"title", convert.Converted, "title: {xpath: //title}"},
		{"has items", convert.Converted, `- regex: (?s)"items"`},
		{"page 1", convert.Converted, `$.page: "1"`},
		{"not empty", convert.Converted, "min_size: 10"},
		{"under 800 ms", convert.Converted, "max_duration: 800ms"},
		{"details", convert.Converted, "name: details"},
		{"each id", convert.Converted, `in: "${ids}"`},
		{"until done", convert.Partial, `while: "${status} != \"done\""`},
		{"poll wait", convert.Converted, "think: gaussian(1s, 100ms)"},
		{"by tenant", convert.Converted, `cond: "${tenant} == \"0\" || ${tenant} == \"acme\""`},
		{"ten percent", convert.Converted, "weight: 10"},
		{"pick one", convert.Converted, "- choose:"},
		{"vip only", convert.Converted, `cond: "(${tenant} == \"acme\")"`},
		{"checkout module", convert.Converted, "name: pay"},
		{"three times", convert.Converted, "count: 3"},
		{"all together", convert.Converted, "users: 5"},
		{"shared steps", convert.Converted, "name: logout"},
		{"arrivals", convert.Partial, "think: exponential(400ms)"},
		{"60 per minute", convert.Partial, "pace: 11s"},
		{"compute signature", convert.NotConverted, `#   | vars.put("sig", "x")`},
		{"count orders", convert.NotConverted, "#   | select count(*) from orders"},
		{"publish", convert.NotConverted, `# not converted: JMSSampler "publish"`},
		{"dummy", convert.NotConverted, "kg.apc.jmeter.samplers.DummySampler"},
		{"beanshell", convert.NotConverted, `#   | print("x");`},
		{"never sent", convert.Disabled, ""},
		{"results tree", convert.NotNeeded, ""},
	} {
		t.Run(tc.element, func(t *testing.T) {
			got, ok := status[tc.element]
			if !ok || got != tc.want {
				t.Errorf("status %v (listed %v), want %v", got, ok, tc.want)
			}
			if tc.yaml != "" && !strings.Contains(plan, tc.yaml) {
				t.Errorf("plan lacks %q", tc.yaml)
			}
		})
	}
	// The literal password of the Authorization Manager is never written.
	if strings.Contains(plan, "hunter2-literal") {
		t.Error("plan holds the Authorization Manager's password")
	}
	if t.Failed() {
		t.Logf("plan:\n%s", plan)
	}
}

// TestFolioTemplate: FOLIO's script template logs in from a setUp thread
// group, reads the token from a response header with a regex and hands it
// to the other groups with props.put in a Groovy script. All of it
// converts: a run-level setup with a header extraction, whose variable
// every workload reads.
func TestFolioTemplate(t *testing.T) {
	src := filepath.Join("testdata", "corpus", "folio-org+perf-testing", "appName_workflowName.jmx")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	root, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(root, Options{Source: src})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Count(); c.Enabled != 15 || c.NotConverted != 0 || c.Disabled != 2 {
		t.Errorf("counts %+v, want 15 enabled, all converted, 2 disabled", c)
	}
	for _, want := range []string{"setup:\n  - request:\n      name: authn/login HTTP Request", "x-okapi-token: {header: x-okapi-token}", `x-okapi-tenant: "${credentials.tenant}"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plan lacks %q:\n%s", want, b)
		}
	}
}

// TestUltimateThreadGroup: one schedule row is a closed load with delay,
// ramp-up and hold; rows that follow one another are steps.
func TestUltimateThreadGroup(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "plans", "ultimate.jmx"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Convert(root, Options{Source: "ultimate.jmx"})
	one, stairs := p.Workloads[0].Load, p.Workloads[1].Load
	if one.Users != "20" || one.RampUp != "30s" || one.Duration != "5m30s" || one.StartAfter != "5s" {
		t.Errorf("one row: %+v", one)
	}
	if len(stairs.Steps) != 2 || stairs.Steps[0].Users != "10" || stairs.Steps[1].Users != "20" || stairs.Steps[0].Duration != "1m10s" {
		t.Errorf("staircase: %+v", stairs.Steps)
	}
}
