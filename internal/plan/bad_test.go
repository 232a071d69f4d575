package plan

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// badFixtures lists, per testdata/*.bad.yaml, the substrings its errors
// must contain, each as "line:col: text" (the file name is prefixed by the
// test). Every listed error must be reported, in one Errors value.
var badFixtures = map[string][]string{
	"search.bad.yaml": {
		`9:28: search: resolution "10users": users for a workload with rate:; give req/s (20/s) or a percentage`,
		`9:42: search: max must be a positive load`,
		`9:53: search: probe must be positive`,
		`9:69: search: max_probes must be at least 1`,
		`9:87: search: max_error_pct must be in (0, 100]`,
		`9:92: unknown key "warmpu" in search (did you mean "warmup"?)`,
		`15:28: search: resolution "5/s": req/s for a workload with users:; give users (10users) or a percentage`,
		`15:40: search: start must be whole users for a load of users:`,
		`21:7: search does not apply to the stepped load model`,
		`27:7: load: a search needs a load that lasts a time (the probes'), not iterations`,
	},
	"unknown-key.bad.yaml": {
		`3:1: unknown key "htpp" in plan (did you mean "http"?)`,
		`8:28: unknown key "methd" in request (did you mean "method"?)`,
		`9:12: unknown key "usres" in load (did you mean "users"?)`,
	},
	"history.bad.yaml": {
		`9:7: history: db is empty (leave it out for the default file)`,
		`10:3: unknown key "tagz" in history (did you mean "tags"?)`,
		`11:10: bad variable name "": use letters, digits, _ and -`,
	},
	"wrong-type.bad.yaml": {
		`4:13: insecure: expected true or false, got "maybe"`,
		`5:14: redirects: expected a whole number, got "lots"`,
		`6:12: headers: expected a mapping of name → value, got a list`,
		`11:16: url: expected text, got a list`,
		`12:27: status: expected a whole number, got "ok"`,
		`13:19: users: expected a whole number, got "ten"`,
		`14:6: sla: expected a list`,
	},
	"undefined-var.bad.yaml": {
		`15:21: undefined variable ${tenat} (did you mean ${tenant}?)`,
		`15:50: undefined variable ${patients.name}: data "patients" has no column "name" (columns: cpr)`,
		`16:65: undefined variable ${other.id}: no data named "other"`,
		`21:19: undefined variable ${token}; workload "read" extracts it`,
		`22:23: undefined variable ${__usr} (did you mean ${__user}?)`,
	},
	"missing-csv.bad.yaml": {
		`5:10: data "people": cannot read testdata/no-such-file.csv: no such file or directory`,
	},
	"bad-duration.bad.yaml": {
		`4:12: timeout: "30" has no unit; write "30s"`,
		`5:20: connect_timeout: "5 seconds" is not a duration`,
		`10:16: think: "2" has no unit`,
		`11:16: think: bad think time "uniform(1s)"`,
		`12:32: duration: "-5s" is negative`,
	},
	"protocols.bad.yaml": {
		`4:12: http.version: "3" is not 1.1, 2 or auto`,
		`5:27: http.max_concurrent_streams must not be negative`,
		`7:9: http.tls.ca: open testdata/no-such-ca.pem: no such file or directory`,
		`8:11: http.tls.cert needs http.tls.key (the certificate's private key)`,
		`9:10: http.proxy: "socks5://127.0.0.1:1" is not an http://host:port URL`,
		`15:25: http_version: "2.0" is not 1.1, 2 or auto`,
	},
	"websocket.bad.yaml": {
		`6:9: send: only inside a websocket step's steps (it needs an open connection)`,
		`8:16: websocket url "http://127.0.0.1:8080/chat" must start with / (relative to target), ws:// or wss://`,
		`10:39: send has both text and binary; use one`,
		`11:47: send: a reply has no name of its own (the round trip is the send's label)`,
		`12:32: a message has no status or headers: a websocket check tests its body (body, regex, json, sizes, max_duration)`,
		`12:56: receive: timeout must be positive`,
		`14:27: extract sid: a message has no headers or cookies; extract from its body (json, regex, left+right, css, xpath)`,
		`15:15: websocket: not inside another websocket (a user holds one connection at a time)`,
		`16:20: websocket has no steps (send and receive steps)`,
		`17:38: tls.ca: open testdata/no-such-ca.pem: no such file or directory`,
	},
	"two-models.bad.yaml": {
		`6:11: load mixes 2 load models: open (rate) and closed (users); use exactly one`,
		`9:11: load: no load model`,
		`13:7: load mixes 2 load models: stepped (steps) and stages (stages)`,
	},
	"syntax.bad.yaml": {
		`6:28: YAML syntax: did not find expected ',' or '}' (inside { } or [ ], quote values that contain ${…})`,
	},
	"env.bad.yaml": {
		`2:9: environment variable PLATEAU_TEST_TARGET is not set`,
		`8:31: environment variable PLATEAU_TEST_KEY is not set`,
		`8:65: ${env.}: missing environment variable name`,
		`9:18: name: ${name} cannot be used here`,
		`10:20: environment variable PLATEAU_TEST_USERS is not set`,
	},
	"many.bad.yaml": {
		`2:1: plan: missing name`,
		`2:9: target "ftp://127.0.0.1:9" must be an http:// or https:// URL`,
		`4:16: http.connections: "pooled" is not per_user or shared`,
		`5:13: max_body: bad size "1 parsec"`,
		`8:37: data "shape": order "shuffled" is not sequential, random, unique, per_user or each_user`,
		`8:61: data "shape": on_exhausted "wrap" is not stop or recycle`,
		`13:16: url "login" must start with /`,
		`14:19: bad method "GE T"`,
		`16:37: extract has both json and regex; use one`,
		`17:24: extract: bad regex`,
		`18:16: extract needs one of json, regex, header`,
		`19:23: extract: bad JSON path "$.a[?("`,
		`21:9: a step holds one of request, think, transaction, loop, if, choose, foreach, until, rendezvous, websocket, send, receive, grpc, trend, not both request and think`,
		`21:43: request has both body and json; use one`,
		`23:9: step needs one of request, think, transaction, loop`,
		`26:33: status 99 is not an HTTP status (100–599)`,
		`26:37: status 600 is not an HTTP status`,
		`26:50: check.json: bad JSON path "$.a[x]"`,
		`30:34: cond: unexpected "=" (compare with ==)`,
		`31:22: transaction: missing name`,
		`31:30: transaction has no steps`,
		`32:23: loop: count must be at least 1`,
		`34:14: load: users must be at least 1`,
		`36:16: load: ramp_up 20s is longer than duration 10s`,
		`37:3: duplicate key "read" (first at 10:3)`,
		`41:18: rate: "10" has no unit; write "10/s"`,
		`41:36: iterations does not apply to the open load model`,
		`45:15: load step: duration must be positive`,
		`45:27: load step 2 uses rate while step 1 uses users`,
		`46:18: stop_when: unknown stop metric "latency_gain" (known: throughput_gain)`,
		`49:7: process target needs exactly one of pid, pid_file, match`,
		`50:7: postgres target needs dsn`,
		`50:18: url does not apply to a postgres target`,
		`51:7: unknown monitor target kind "gpu"`,
		`52:25: prometheus target needs url`,
		`53:7: monitor target: expected one kind`,
		`55:5: sla: empty expression`,
		`56:5: sla: unknown unit "parsec"`,
		// The CSV's own error names the CSV file and its line.
		`testdata/malformed.csv:4:11: extraneous or missing " in quoted-field (data "broken")`,
	},
}

// fakeCheckSLA stands in for the sla package's syntax check.
func fakeCheckSLA(expr string) error {
	if strings.Contains(expr, "parsec") {
		return errors.New(`unknown unit "parsec"`)
	}
	return nil
}

func TestBadFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := badFixtures[filepath.Base(f)]; !ok {
			t.Errorf("%s has no entry in badFixtures", f)
		}
	}
	for name, want := range badFixtures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", name)
			p, err := LoadFile(path, Options{CheckSLA: fakeCheckSLA, Env: func(string) (string, bool) { return "", false }})
			if err == nil {
				t.Fatalf("loaded without error: %+v", p)
			}
			if p != nil {
				t.Errorf("a plan was returned with errors")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is %T, not Errors", err)
			}
			text := err.Error()
			for _, w := range want {
				if !strings.HasPrefix(w, "testdata/") {
					w = path + ":" + w
				}
				if !strings.Contains(text, w) {
					t.Errorf("missing error %q", w)
				}
			}
			// Every reported error is expected: nothing spurious, no cascade.
			if len(es) != len(want) {
				t.Errorf("%d errors reported, %d expected:\n%s", len(es), len(want), text)
			}
			for _, e := range es {
				if e.Pos.Line < 1 || e.Pos.Col < 1 {
					t.Errorf("error without position: %v", e)
				}
			}
		})
	}
}

func TestErrorFormat(t *testing.T) {
	t.Parallel()
	e := Error{File: "plan.yaml", Pos: Pos{12, 7}, Msg: `unknown key "usres" in load (did you mean "users"?)`}
	if got := e.Error(); got != `plan.yaml:12:7: unknown key "usres" in load (did you mean "users"?)` {
		t.Errorf("Error() = %q", got)
	}
	es := Errors{e, {File: "x.csv", Msg: "cannot read"}}
	if got := es.Error(); got != e.Error()+"\nx.csv: cannot read" {
		t.Errorf("Errors.Error() = %q", got)
	}
}

// TestParseErrorsInline covers problems that need no fixture file.
func TestParseErrorsInline(t *testing.T) {
	t.Parallel()
	const head = "name: x\ntarget: http://127.0.0.1:9\n"
	cases := []struct {
		name, src, want string
	}{
		{"empty", "", "p.yaml:1:1: plan is empty"},
		{"comment only", "# nothing\n", "p.yaml:1:1: plan is empty"},
		{"not a mapping", "- a\n- b\n", "p.yaml:1:1: plan: expected a mapping, got a list"},
		{"unclosed quote", "name: \"x\ntarget: y\n", "p.yaml:1:7: YAML syntax: could not find end character of double-quoted text"},
		{"tab indent", "name: x\n\ttarget: y\n", "p.yaml:2:1: YAML syntax: found a tab character that violates indentation"},
		{"second document", head + "---\nname: y\n", "p.yaml:3:1: plan holds a second YAML document"},
		{"no workloads", head, "p.yaml:1:1: plan: missing workloads"},
		{"workload without scenario", head + "workloads:\n  w:\n    load: {users: 1, iterations: 1}\n", `p.yaml:5:5: workload "w": missing scenario`},
		{"workload without load", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n", `p.yaml:5:5: workload "w": missing load`},
		{"both duration and iterations", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1, duration: 1s}\n",
			"p.yaml:6:22: load: give duration or iterations, not both"},
		{"pacing without duration", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 2, pace: 1s}\n",
			"p.yaml:6:11: load: the pacing model needs a duration"},
		{"negative graceful_stop", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 2, duration: 1s, graceful_stop: -1s}\n",
			`p.yaml:6:51: graceful_stop: "-1s" is negative`},
		{"sla entry without expr", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\nsla:\n  - {abort_on_fail: true}\n",
			"p.yaml:8:5: sla: expr is required"},
		{"sla entry unknown key", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\nsla:\n  - {expr: \"error_rate < 1%\", abort_on_fial: true}\n",
			`p.yaml:8:31: unknown key "abort_on_fial" in sla (did you mean "abort_on_fail"?)`},
		{"max_users on closed", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 2, duration: 1s, max_users: 3}\n",
			"p.yaml:6:36: max_users does not apply to the closed load model"},
		{"ramp_down on stages of users", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {stages: [{users: 2, duration: 1s}], ramp_down: 1s}\n",
			"p.yaml:6:48: load: stages of users ramp down with a last stage to 0 users"},
		{"ramp_down on steps of rate", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {steps: [{rate: 2/s, duration: 1s}], ramp_down: 1s}\n",
			"p.yaml:6:48: load: ramp_down applies to steps of users"},
		{"trend without value", head + "workloads:\n  w:\n    scenario: [{trend: {name: t}}]\n    load: {users: 1, iterations: 1}\n",
			"p.yaml:5:24: trend: missing value"},
		{"trend without name", head + "workloads:\n  w:\n    scenario: [{trend: {value: 12}}]\n    load: {users: 1, iterations: 1}\n",
			"trend: missing name"},
		{"stop rule needs percent", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {steps: [{users: 1, duration: 1s}], stop_when: throughput_gain < 0.05}\n",
			`p.yaml:6:58: stop_when: bad stop rule "throughput_gain < 0.05"`},
		{"unterminated template", head + "workloads:\n  w:\n    scenario: [{request: {url: \"/a/${id\"}}]\n    load: {users: 1, iterations: 1}\n",
			"p.yaml:5:36: url: unterminated ${"},
		{"anchor bomb", head + "x-a: &a [1,1,1,1,1,1,1,1,1,1]\nx-b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nx-c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"x-d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\nx-e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n" +
			"workloads:\n  w:\n    scenario: [{request: {url: /, json: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]}}]\n    load: {users: 1, iterations: 1}\n",
			"too many alias (*name) expansions"},
		{"duplicate monitor name", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\nmonitor:\n  targets: [host, host]\n",
			`p.yaml:8:19: monitor target name "host" is used twice (first at 8:13)`},
		{"secret var reserved", head + "vars: {__user: x, env: y}\nworkloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\n",
			`p.yaml:3:8: "__user" is a built-in variable`},
		{"plan header must be extracted by all", head + "http: {headers: {X-T: \"${tok}\"}}\nworkloads:\n  a:\n    scenario: [{request: {url: /, extract: {tok: {header: X}}}}]\n    load: {users: 1, iterations: 1}\n  b:\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\n",
			"p.yaml:3:24: undefined variable ${tok}; http.headers may only use a variable that every workload extracts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("p.yaml", []byte(c.src), "testdata", Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got\n%v\nwant %q", err, c.want)
			}
		})
	}
}

func TestParseErrorsMore(t *testing.T) {
	t.Parallel()
	const head = "name: x\ntarget: http://127.0.0.1:9\n"
	cases := []struct{ name, src, want string }{
		{"empty workloads", head + "workloads: {}\n", "p.yaml:3:12: plan: workloads is empty"},
		{"scenario as mapping", head + "workloads:\n  w:\n    scenario: {request: {url: /}}\n    load: {users: 1, iterations: 1}\n",
			"p.yaml:5:15: scenario: expected a list of steps (each item starts with -"},
		{"pacing without users", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {pace: 1s, duration: 1m}\n",
			"p.yaml:6:11: load: pacing needs users"},
		{"closed without duration", head + "workloads:\n  w:\n    scenario: [{think: 1s}]\n    load: {users: 3, ramp_up: 1s}\n",
			"p.yaml:6:11: load: the closed model needs duration or iterations"},
		{"typo in step", head + "workloads:\n  w:\n    scenario: [{requst: {url: /}}]\n    load: {users: 1, iterations: 1}\n",
			`p.yaml:5:17: unknown key "requst" in step (did you mean "request"?)`},
		{"multipart order names no part", head + "workloads:\n  w:\n    scenario: [{request: {url: /, method: POST, multipart: {fields: {a: '1', b: '2'}, order: [b, c]}}}]\n    load: {users: 1, iterations: 1}\n",
			`multipart order: "c" names no part (or more parts than it has)`},
		{"multipart order leaves a part out", head + "workloads:\n  w:\n    scenario: [{request: {url: /, method: POST, multipart: {fields: {a: '1', b: '2'}, order: [b]}}}]\n    load: {users: 1, iterations: 1}\n",
			`multipart order: field "a" is not in the order`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("p.yaml", []byte(c.src), "testdata", Options{})
			var es Errors
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &es) || len(es) != 1 {
				t.Errorf("got\n%v\nwant only %q", err, c.want)
			}
		})
	}
}

// A ${…} in a position that is not a template is an error, not sent as is.
func TestRefOutsideTemplates(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"header name":   `headers: {"X-${a}": v}`,
		"extract name":  `extract: {"${a}": {header: X}}`,
		"typed in url":  `headers: {X: "${a:int}"}`,
		"workload name": "",
	}
	for name, req := range cases {
		src := "name: r\ntarget: http://127.0.0.1:9\nvars: {a: x}\nworkloads:\n  w:\n    scenario:\n      - request:\n          url: /x\n          " + req + "\n    load: {users: 1, iterations: 1}\n"
		if name == "workload name" {
			src = "name: r\ntarget: http://127.0.0.1:9\nworkloads:\n  \"w${a}\":\n    scenario: [{think: 1s}]\n    load: {users: 1, iterations: 1}\n"
		}
		if _, err := Parse("r.yaml", []byte(src), "testdata", Options{}); err == nil || !strings.Contains(err.Error(), "r.yaml:") {
			t.Errorf("%s: got %v, want a positioned error", name, err)
		}
	}
}
