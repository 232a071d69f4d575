package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// shopServer is a small service for the plan constructs of issue 15: a
// CSRF-protected login (k6's quickpizza shape), a list to iterate, a job to
// poll, an HTML page, and endpoints that record what they received.
type shopServer struct {
	*httptest.Server
	mu    sync.Mutex
	seen  map[string]int // "METHOD path?query" → count
	order []string       // the same keys in arrival order
	typed []string       // bodies of POST /orders
	polls map[string]int // job → polls
	jar   []string       // Cookie headers of GET /whoami
}

func newShopServer(t *testing.T) *shopServer {
	s := &shopServer{seen: map[string]int{}, polls: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "csrf_token", Value: "csrf-42", Path: "/"})
		fmt.Fprint(w, `<html><form><input type="hidden" name="nonce" value="n-7"></form><p id="motd">Hello there</p></html>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("csrf_token")
		if err != nil || r.FormValue("csrf") != c.Value || r.FormValue("nonce") != "n-7" {
			http.Error(w, "bad csrf", http.StatusForbidden)
			return
		}
		fmt.Fprintf(w, `{"token":"tok-%s"}`, r.FormValue("user"))
	})
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "token tok-") {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("X-Total", "3")
		fmt.Fprint(w, `{"items":[{"id":1,"status":"open"},{"id":2,"status":"closed"},{"id":3,"status":"open"}],"more":false}`)
	})
	mux.HandleFunc("POST /orders", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.typed = append(s.typed, string(b))
		s.mu.Unlock()
		var o struct {
			Qty  *float64 `json:"qty"`
			Gift *bool    `json:"gift"`
		}
		if json.Unmarshal(b, &o) != nil || o.Qty == nil || o.Gift == nil {
			http.Error(w, "qty must be a number, gift a boolean", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"job":"j1"}`)
	})
	mux.HandleFunc("GET /jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.polls[r.PathValue("id")]++
		n := s.polls[r.PathValue("id")]
		s.mu.Unlock()
		fmt.Fprintf(w, `{"done":%v}`, n%3 == 0)
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.jar = append(s.jar, r.Header.Get("Cookie"))
		s.mu.Unlock()
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"ok":true}`)
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		key := r.Method + " " + r.URL.EscapedPath()
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		s.seen[key]++
		s.order = append(s.order, key)
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *shopServer) count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[key]
}

// One plan with the constructs of issue 15, against a real server on
// loopback: the k6 CSRF login (cookie extraction, form keys as templates,
// CSS extraction), foreach over a JSONPath filter, if/else, a while loop,
// until polling, typed JSON, functions, query encoding, nested
// transactions, check lists and on_fail.
func TestFlowConstructs(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: flow
target: http://x
vars: {user: "ann", field: "csrf"}
workloads:
  shop:
    scenario:
      - transaction:
          name: login
          steps:
            - request:
                name: login page
                url: /login
                extract:
                  csrf: {cookie: csrf_token}
                  nonce: {css: 'input[name=nonce]', attr: value}
                  motd: {xpath: '//p[@id="motd"]'}
                  greet: {left: "<p id=\"motd\">", right: "</p>"}
            - request:
                name: login post
                method: POST
                url: /login
                form: {"${field}": "${csrf}", nonce: "${nonce}", user: "${user}"}
                extract: {token: {json: $.token}}
      - transaction:
          name: browse
          steps:
            - transaction:
                name: list
                steps:
                  - request:
                      name: items
                      url: /items
                      headers: {Authorization: "token ${token}"}
                      extract:
                        open: {json: '$.items[?(@.status=="open")].id', all: true}
                        anyid: {json: '$.items[*].id', pick: random}
                      check:
                        - {name: has items, json_exists: [$.items], json_absent: [$.error]}
                        - {header: {X-Total: "3"}, json_match: {"$.items[0].status": "^op"}, max_size: 1KiB}
            - foreach:
                in: "${open}"
                as: id
                steps:
                  - request: {name: item, url: "/items/${id}"}
      - if:
          cond: '${status} == 200 && ${token} != "" && ${motd} == "Hello there" && ${greet} == ${motd}'
          steps:
            - request: {name: then, url: /then}
          else:
            - request: {name: else, url: /else}
      - request:
          name: order
          method: POST
          url: /orders
          json: {qty: "${__iteration:int}", gift: "${ok:bool}", note: "${upper(user)}", ref: "${uuid()}"}
          extract: {job: {json: $.job}}
          check: {status: 201}
      - until:
          name: job finished
          cond: json("$.done") == true
          interval: 10ms
          timeout: 5s
          steps:
            - request: {name: poll, url: "/jobs/${job}"}
      - loop:
          while: '${__iteration} == 1'
          max: 2
          steps:
            - request: {name: looped, url: "/loop"}
      - request:
          name: search
          url: "/search/${name} x?sort=${sort}"
          query: {q: "a b&c", "k${n}": "${urlencode(user)}"}
      - request:
          name: missing
          url: /missing
          extract: {nothing: {regex: "never-there"}}
      - request: {name: unreachable, url: /after-skip}
    load: {users: 1, iterations: 2}
`
	src = strings.Replace(src, `vars: {user: "ann", field: "csrf"}`, `vars: {user: "ann", field: "csrf", ok: "true", name: "Bob Smith", sort: "a&b", n: "1"}`, 1)
	d, res, _ := runPlan(t, context.Background(), src, s.URL)
	for _, l := range []string{"login page", "login post", "items", "item", "then", "order", "poll", "search", "missing"} {
		n, errs := labelAgg(d, l)
		want := int64(2)
		switch l {
		case "item":
			want = 4 // ids 1 and 3, twice
		case "poll":
			want = 6 // done on every third poll
		}
		if n != want {
			t.Errorf("%s: %d samples, want %d", l, n, want)
		}
		if l != "missing" && errs != 0 {
			t.Errorf("%s: %d errors", l, errs)
		}
	}
	if n, errs := labelAgg(d, "missing"); n != 2 || errs != 2 {
		t.Errorf("missing: %d samples %d errors, want 2 failed (extraction without a default)", n, errs)
	}
	for _, l := range []string{"login", "browse", "list", "job finished"} {
		if n, _ := labelAgg(d, l); n != 2 {
			t.Errorf("transaction %s: %d samples, want 2", l, n)
		}
	}
	if n, _ := labelAgg(d, "looped"); n != 2 {
		t.Errorf("while loop ran %d times, want 2 (max 2 in iteration 1, none in iteration 2)", n)
	}
	if n := s.count("GET /after-skip"); n != 0 {
		t.Errorf("a failed extraction did not skip the rest of the iteration: %d requests after it", n)
	}
	if res.Skipped["shop"] != 2 || d.Info.Skipped["shop"] != 2 {
		t.Errorf("skipped iterations = %v (run.json %v), want 2", res.Skipped, d.Info.Skipped)
	}
	if n := s.count("GET /else"); n != 0 {
		t.Errorf("else branch ran %d times", n)
	}
	if n := s.count("GET /items/1") + s.count("GET /items/3"); n != 4 || s.count("GET /items/2") != 0 {
		t.Errorf("foreach over open items: %v", s.seen)
	}
	if n := s.count("GET /search/Bob%20Smith%20x?sort=a%26b&q=a+b%26c&k1=ann"); n != 2 {
		t.Errorf("encoded search URL not seen; server saw %v", s.seen)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.typed) != 2 || !strings.HasPrefix(s.typed[0], `{"qty":1,"gift":true,"note":"ANN","ref":"`) {
		t.Errorf("typed JSON bodies: %q", s.typed)
	}
}

// The split of a choose step matches its weights (chi-square, fixed seed).
func TestChooseWeights(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: choose
target: http://x
workloads:
  w:
    scenario:
      - choose:
          - {weight: 70, steps: [{request: {name: a, url: /a}}]}
          - {weight: 20, steps: [{request: {name: b, url: /b}}]}
          - {weight: 10, steps: [{request: {name: c, url: /c}}]}
    load: {users: 2, iterations: 500}
`
	runPlan(t, context.Background(), src, s.URL)
	obs := []float64{float64(s.count("GET /a")), float64(s.count("GET /b")), float64(s.count("GET /c"))}
	want := []float64{0.7, 0.2, 0.1}
	chi := 0.0
	total := obs[0] + obs[1] + obs[2]
	for i := range obs {
		e := want[i] * total
		chi += (obs[i] - e) * (obs[i] - e) / e
	}
	// 2 degrees of freedom: P(χ² > 13.8) = 0.001.
	if total != 1000 || chi > 13.8 || math.IsNaN(chi) {
		t.Errorf("split %v of %v: χ² = %.2f", obs, total, chi)
	}
}

// on_fail: stop_run ends the whole run at the first failure.
func TestOnFailStopRun(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: stop
target: http://x
workloads:
  w:
    on_fail: stop_run
    scenario:
      - request: {name: bad, url: /items}
      - think: 10ms
    load: {users: 2, duration: 30s}
`
	start := time.Now()
	_, res, _ := runPlan(t, context.Background(), src, s.URL)
	if time.Since(start) > 10*time.Second || !strings.Contains(res.Stopped, "stop_run") {
		t.Errorf("run stopped %q after %v", res.Stopped, time.Since(start))
	}
}

// A rendezvous releases users together.
func TestRendezvous(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: rdv
target: http://x
workloads:
  w:
    scenario:
      - rendezvous: {users: 3, timeout: 10s}
      - request: {name: go, url: /go}
    load: {users: 3, iterations: 1, ramp_up: 0s}
`
	runPlan(t, context.Background(), src, s.URL)
	if n := s.count("GET /go"); n != 3 {
		t.Errorf("%d requests after the rendezvous, want 3", n)
	}
}

// Run-level setup runs once, and every user reads what it extracted.
func TestRunLevelSetup(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: runsetup
target: http://x
setup:
  - request: {name: login page, url: /login, extract: {csrf: {cookie: csrf_token}, nonce: {css: 'input[name=nonce]', attr: value}}}
  - request: {name: login, method: POST, url: /login, form: {csrf: "${csrf}", nonce: "${nonce}", user: admin}, extract: {token: {json: $.token}}}
teardown:
  - request: {name: bye, url: /bye}
workloads:
  w:
    scenario:
      - request: {name: items, url: /items, headers: {Authorization: "token ${token}"}}
    load: {users: 3, iterations: 2}
`
	d, _, _ := runPlan(t, context.Background(), src, s.URL)
	if n := s.count("POST /login"); n != 1 {
		t.Errorf("run-level setup ran %d times, want 1", n)
	}
	if n, errs := labelAgg(d, "items"); n != 6 || errs != 0 {
		t.Errorf("items: %d samples, %d errors; want 6 without errors (token from the run-level setup)", n, errs)
	}
	if n, _ := labelAgg(d, "login"); n != 0 {
		t.Errorf("run-level setup was measured: %d samples", n)
	}
	if n := s.count("GET /bye"); n != 1 {
		t.Errorf("run-level teardown ran %d times, want 1", n)
	}
}

// JSON, NDJSON and headerless CSV feeders; per_user keeps a user's row;
// on_end: stop_user stops only the user that ran out.
func TestFeederFormats(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	users := write("users.json", `[{"login":"ann","age":31},{"login":"bob","age":40,"vip":true}]`)
	items := write("items.ndjson", "{\"sku\":\"a-1\"}\n{\"sku\":\"b-2\"}\n{\"sku\":\"c-3\"}\n")
	pairs := write("pairs.csv", "x,1\ny,2\n")
	src := `name: feeders
target: http://x
data:
  users: {json: ` + users + `, order: per_user}
  items: {ndjson: ` + items + `, order: unique, on_end: stop_user}
  pairs: {csv: ` + pairs + `, columns: [k, v]}
workloads:
  w:
    scenario:
      - request: {name: r, url: "/u/${__user}/${users.login}/${users.age}/${items.sku}/${pairs.k}${pairs.v}"}
    load: {users: 2, iterations: 5}
`
	_, res, _ := runPlan(t, context.Background(), src, s.URL)
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	login := map[string]string{} // user number → login
	for k, n := range s.seen {
		if !strings.HasPrefix(k, "GET /u/") {
			continue
		}
		total += n
		parts := strings.Split(k, "/")
		if (parts[3] != "ann" || parts[4] != "31") && (parts[3] != "bob" || parts[4] != "40") {
			t.Errorf("row mixed: %s", k)
		}
		if prev, ok := login[parts[2]]; ok && prev != parts[3] {
			t.Errorf("per_user: user %s read %s and %s", parts[2], prev, parts[3])
		}
		login[parts[2]] = parts[3]
		if !strings.HasSuffix(k, "/x1") && !strings.HasSuffix(k, "/y2") {
			t.Errorf("headerless csv columns: %s", k)
		}
	}
	// Three unique items in all: the users stop (not the workload) when
	// they run out.
	if total != 3 {
		t.Errorf("%d requests, want 3 (one per unique item): %v", total, s.seen)
	}
	if res.Stopped != "" {
		t.Errorf("run stopped: %q", res.Stopped)
	}
}

// order: each_user — every user reads the file from its first row on its
// own cursor (JMeter's share mode "current thread"): with recycling each
// user sends r1 r2 r3 r1; with on_end: stop_user each sends the 3 rows once
// and stops, the other users going on to their own end.
func TestFeederEachUser(t *testing.T) {
	t.Parallel()
	rows := t.TempDir() + "/rows.csv"
	if err := os.WriteFile(rows, []byte("r1\nr2\nr3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		end  string
		want string
	}{{"recycle", "r1 r2 r3 r1"}, {"stop_user", "r1 r2 r3"}} {
		s := newShopServer(t)
		src := `name: each
target: http://x
data:
  rows: {csv: ` + rows + `, columns: [v], order: each_user, on_end: ` + c.end + `}
workloads:
  w:
    scenario:
      - request: {name: r, url: "/e/${__user}/${rows.v}"}
    load: {users: 3, iterations: 4}
`
		_, res, _ := runPlan(t, context.Background(), src, s.URL)
		s.mu.Lock()
		per := map[string][]string{}
		for _, k := range s.order {
			if rest, ok := strings.CutPrefix(k, "GET /e/"); ok {
				u, v, _ := strings.Cut(rest, "/")
				per[u] = append(per[u], v)
			}
		}
		s.mu.Unlock()
		if len(per) != 3 {
			t.Errorf("on_end %s: %d users sent, want 3: %v", c.end, len(per), per)
		}
		for u, vs := range per {
			if got := strings.Join(vs, " "); got != c.want {
				t.Errorf("on_end %s: user %s sent %s, want %s", c.end, u, got, c.want)
			}
		}
		if res.Stopped != "" {
			t.Errorf("on_end %s: run stopped: %q", c.end, res.Stopped)
		}
	}
}

// cookies: per_iteration empties the jar at each iteration; a request's
// cookies: are put into the jar before it is sent.
func TestCookieControl(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"per_iteration", "per_user"} {
		s := newShopServer(t)
		src := `name: cookies
target: http://x
http: {cookies: ` + mode + `}
workloads:
  w:
    scenario:
      - request: {name: who, url: /whoami, cookies: {theme: "${t}"}}
      - request: {name: login, url: /login}
    load: {users: 1, iterations: 2}
vars: {t: dark}
`
		runPlan(t, context.Background(), src, s.URL)
		s.mu.Lock()
		got := strings.Join(s.jar, " | ")
		s.mu.Unlock()
		want := "theme=dark | theme=dark"
		if mode == "per_user" {
			want = "theme=dark | theme=dark; csrf_token=csrf-42"
		}
		if got != want {
			t.Errorf("%s: Cookie headers %q, want %q", mode, got, want)
		}
	}
}

// Closed-model stages by users ramp up, hold and ramp down to zero, each a
// phase; ramp_down on a closed load stops users one by one.
func TestUserStagesAndRampDown(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: ustages
target: http://x
workloads:
  w:
    scenario:
      - request: {name: r, url: /r}
      - think: 20ms
    load:
      stages:
        - {users: 4, duration: 400ms}
        - {users: 4, duration: 300ms}
        - {users: 0, duration: 400ms}
`
	start := time.Now()
	d, _, _ := runPlan(t, context.Background(), src, s.URL)
	took := time.Since(start)
	if len(d.Info.Phases) != 3 || !strings.Contains(d.Info.Phases[2].Name, "4→0 users") {
		t.Fatalf("phases %+v", d.Info.Phases)
	}
	if took < 1050*time.Millisecond || took > 10*time.Second {
		t.Errorf("stages took %v, want about 1.1s", took)
	}
	for i, p := range d.Info.Phases {
		if p.End == nil || p.End.Sub(p.Start) < 250*time.Millisecond {
			t.Errorf("phase %d %q: %v–%v", i, p.Name, p.Start, p.End)
		}
	}
	if n, _ := labelAgg(d, "r"); n < 20 {
		t.Errorf("only %d requests", n)
	}

	src = `name: rampdown
target: http://x
workloads:
  w:
    scenario:
      - request: {name: r, url: /r}
      - think: 20ms
    load: {users: 3, duration: 300ms, ramp_down: 600ms}
`
	start = time.Now()
	runPlan(t, context.Background(), src, s.URL)
	if took := time.Since(start); took < 850*time.Millisecond {
		t.Errorf("closed load with ramp_down took %v, want ≥ 900ms", took)
	}
}

// Every check is counted by name; an SLA on the checks' pass rate is judged
// from the counts.
func TestChecksThreshold(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: checks
target: http://x
workloads:
  w:
    scenario:
      - request:
          name: flaky
          url: "/jobs/x"
          check:
            - {name: done, json: {$.done: true}}
            - {name: json, json_exists: [$.done]}
    load: {users: 1, iterations: 9}
`
	d, _, _ := runPlan(t, context.Background(), src, s.URL)
	if got := d.Info.Checks["done"]; got.Passed != 3 || got.Failed != 6 {
		t.Errorf("check done: %+v, want 3 passed, 6 failed", got)
	}
	if got := d.Info.Checks["json"]; got.Passed != 9 || got.Failed != 0 {
		t.Errorf("check json: %+v, want 9 passed", got)
	}
	for expr, pass := range map[string]bool{
		`checks{name="json"} == 100%`: true,
		`checks{name="done"} > 40%`:   false,
		`checks > 60%`:                true, // 12 of 18
		`checks > 70%`:                false,
	} {
		r := d.JudgeSLA(expr)
		if r.Passed != pass || r.Error != "" {
			t.Errorf("%s: passed %v (observed %.1f, error %q), want %v", expr, r.Passed, r.Observed, r.Error, pass)
		}
	}
	if r := d.JudgeSLA(`checks{name="nope"} > 1%`); !r.NoData {
		t.Errorf("unknown check judged: %+v", r)
	}
}

// The plan package's fixture with every construct compiles for the engine.
func TestCompileConstructsFixture(t *testing.T) {
	t.Parallel()
	p, err := plan.LoadFile("../plan/testdata/constructs.good.yaml", plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := engine.Check(p); err != nil {
		t.Fatal(err)
	}
}

// A typed json: value that is not of its type is sent as null and the
// request fails with the reason (never a silent null).
func TestTypedJSONBadValue(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	src := `name: typed
target: http://x
vars: {n: "three"}
workloads:
  w:
    scenario:
      - request: {name: typed, method: POST, url: /echo, json: {qty: "${n:int}"}}
    load: {users: 1, iterations: 1}
`
	d, _, _ := runPlan(t, context.Background(), src, s.URL)
	if n, errs := labelAgg(d, "typed"); n != 1 || errs != 1 {
		t.Errorf("typed: %d samples, %d errors; want 1 failed", n, errs)
	}
	found := false
	for _, e := range d.Errors {
		if strings.Contains(e.Message, `json value "three" is not of type int; sent null`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no error message about the typed value: %+v", d.Errors)
	}
}

// ramp_down on the open model (a constant rate, or rate stages) lowers the
// arrival rate linearly to zero over that time after the load's end, as
// k6's ramping-arrival-rate does with a last stage to 0: 40/s for 500 ms
// then 40 → 0/s over 500 ms is 20 + 10 iterations, the second half
// thinning out.
func TestOpenRampDown(t *testing.T) {
	t.Parallel()
	s := newShopServer(t)
	for _, c := range []struct {
		load string
		want int64
	}{
		{"{rate: 40/s, duration: 500ms, ramp_down: 500ms}", 30},
		{"{stages: [{rate: 20/s, duration: 500ms, hold: true}], ramp_down: 1s}", 20},
	} {
		src := `name: openramp
target: http://x
workloads:
  w:
    scenario:
      - request: {name: r, url: /r}
    load: ` + c.load + `
`
		d, _, _ := runPlan(t, context.Background(), src, s.URL)
		if len(d.Info.Phases) != 1 {
			t.Fatalf("%s: phases %+v", c.load, d.Info.Phases)
		}
		p := d.Info.Phases[0]
		// The schedule is counted whatever the machine: every planned
		// iteration started or dropped, each started one a request. That
		// none dropped holds for a generator that got its CPU.
		if p.Planned != c.want || p.Started+d.Dropped["w"] != p.Planned {
			t.Errorf("%s: planned %d, started %d, dropped %d iterations, want %d planned, each started or dropped", c.load, p.Planned, p.Started, d.Dropped["w"], c.want)
		}
		if n, _ := labelAgg(d, "r"); n != p.Started {
			t.Errorf("%s: %d requests, want %d (one per started iteration)", c.load, n, p.Started)
		}
		if pct, bad := starved(d); !bad && p.Started != c.want {
			t.Errorf("%s: started %d of %d with the generator on its CPU (run-queue wait %.1f%%)", c.load, p.Started, c.want, pct)
		}
	}
}

// Check outcomes are counted per phase by the phase rule (the phase of the
// workload running when the check was evaluated), so a checks requirement
// is judged per phase and `during` a phase: the server answers its first
// five requests and fails the rest, so step 1 holds checks that pass and
// step 2 only checks that fail. A check evaluated after the last step
// ended (its request in flight at the end) belongs to no phase and counts
// in the run's total only, as its sample does.
func TestChecksPerPhase(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > 5 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	src := `name: checks-per-phase
target: http://x
workloads:
  w:
    scenario:
      - request: {name: r, url: /r, check: [{name: ok, status: 200}]}
      - think: 20ms
    load:
      steps:
        - {users: 1, duration: 400ms}
        - {users: 1, duration: 300ms}
sla:
  - checks > 50%
`
	d, _, _ := runPlan(t, context.Background(), src, srv.URL)
	if len(d.Info.Phases) != 2 {
		t.Fatalf("phases %+v", d.Info.Phases)
	}
	var sum rundir.CheckCount
	for _, p := range d.Info.Phases {
		c := p.Checks["ok"]
		sum.Passed += c.Passed
		sum.Failed += c.Failed
		if c.Passed+c.Failed == 0 {
			t.Errorf("phase %q counted no check: %+v", p.Name, p.Checks)
		}
	}
	// core.PhaseOf: a request still in flight when the last step ends
	// completes during the graceful stop, in no phase; its check counts in
	// the run's total only. Every request has the one check, so the
	// phases miss exactly the requests outside every phase.
	outside, _ := labelAgg(d, "r")
	for _, ph := range d.ByPhase {
		for k, a := range ph {
			if k.Label == "r" {
				outside -= a.Count
			}
		}
	}
	whole := d.Info.Checks["ok"]
	if whole.Passed != 5 || sum.Passed+sum.Failed+outside != whole.Passed+whole.Failed || sum.Passed > whole.Passed || sum.Failed > whole.Failed {
		t.Errorf("phases sum to %+v and %d requests completed outside every phase; the run counted %+v (want 5 passed)", sum, outside, whole)
	}
	if c := d.Info.Phases[1].Checks["ok"]; c.Passed != 0 {
		t.Errorf("step 2 counted %d passed checks; the server failed every request after the fifth", c.Passed)
	}
	if r := d.JudgeSLA(`checks > 10% during "step 1"`); !r.Passed || r.Error != "" || r.Scope != "step 1" {
		t.Errorf("during step 1: %+v", r)
	}
	if r := d.JudgeSLA(`checks{name="ok"} > 10% during "step 2"`); r.Passed || r.Error != "" || r.Observed != 0 {
		t.Errorf("during step 2: %+v", r)
	}
	r := d.JudgeSLA(`checks > 10%`)
	if len(r.PerPhase) != 2 || !r.PerPhase[0].Passed || r.PerPhase[1].Passed || r.HeldUpTo != "step 1" || r.FirstBroken != "step 2" {
		t.Errorf("per phase: %+v", r)
	}
}

// A trend step records a value the plan extracted — here the server's own
// processing time from its JSON — as a time under its own label (k6's
// custom Trend): percentiles and SLAs by label, kept out of the request
// totals, and a value that is not a time is a counted failure.
func TestTrendStep(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		fmt.Fprintf(w, `{"took_ms": %d, "word": "fast"}`, 10*i)
	}))
	t.Cleanup(srv.Close)
	src := `name: trends
target: http://x
workloads:
  w:
    scenario:
      - request:
          name: work
          url: /work
          extract: {took: {json: $.took_ms}, word: {json: $.word}}
      - trend: {name: server time, value: "${took}"}
      - trend: {name: fixed, value: 1.5s}
      - trend: {name: not a time, value: "${word}"}
    load: {users: 1, iterations: 4}
sla:
  - p95(response_time{label="server time"}) < 100ms
`
	d, _, _ := runPlan(t, context.Background(), src, srv.URL)
	var server, fixed, bad *metrics.Agg
	for k, a := range d.Run {
		switch k.Label {
		case "server time":
			server = a
			if !k.Tx {
				t.Error("a trend must stay out of the request totals")
			}
		case "fixed":
			fixed = a
		case "not a time":
			bad = a
		}
	}
	if server == nil || server.Count != 4 || server.Errors != 0 || server.MinUs != 10_000 || server.MaxUs != 40_000 || server.MeanMs() != 25 {
		t.Fatalf("server time: %+v, want 4 values 10, 20, 30, 40 ms", server)
	}
	if fixed == nil || fixed.Count != 4 || fixed.MinUs != 1_500_000 {
		t.Errorf("fixed: %+v, want 4 × 1.5 s", fixed)
	}
	if bad == nil || bad.Count != 4 || bad.Errors != 4 {
		t.Errorf("not a time: %+v, want 4 failures", bad)
	}
	if tot := d.Total; tot.Count != 4 {
		t.Errorf("all requests: %d samples, want the 4 requests only", tot.Count)
	}
	if r := d.JudgeSLA(`p95(response_time{label="server time"}) < 100ms`); !r.Passed || r.Error != "" || r.Observed < 39 || r.Observed > 41 {
		t.Errorf("SLA on the trend: %+v", r)
	}
	if r := d.JudgeSLA(`avg(response_time{label="server time"}) < 20ms`); r.Passed {
		t.Errorf("avg 25 ms judged below 20 ms: %+v", r)
	}
}

// extract as_json keeps a json match as JSON text, so a raw body sends it
// with the type the response gave it: a number as a number, a string with
// its quotes (escaped), an object as JSON; without as_json the same value
// is its text (7, a"b).
func TestExtractAsJSON(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, r.URL.Path+" "+string(b))
		mu.Unlock()
		fmt.Fprint(w, `{"n":7,"s":"a\"b","o":{"x":1},"f":false}`)
	}))
	t.Cleanup(srv.Close)
	src := `name: asjson
target: http://x
workloads:
  w:
    scenario:
      - request:
          name: get
          url: /get
          extract:
            n: {json: $.n, as_json: true}
            s: {json: $.s, as_json: true}
            o: {json: $.o, as_json: true}
            f: {json: $.f, as_json: true}
            n_text: {json: $.n}
            s_text: {json: $.s}
      - request: {name: put, method: POST, url: /put, body: '{"n":${n},"s":${s},"o":${o},"f":${f}}'}
      - request: {name: text, method: POST, url: "/text/${n_text}", body: '${s_text}'}
    load: {users: 1, iterations: 1}
`
	runPlan(t, context.Background(), src, srv.URL)
	mu.Lock()
	defer mu.Unlock()
	want := []string{"/get ", `/put {"n":7,"s":"a\"b","o":{"x":1},"f":false}`, `/text/7 a"b`}
	if strings.Join(bodies, "\n") != strings.Join(want, "\n") {
		t.Errorf("server saw\n%s\nwant\n%s", strings.Join(bodies, "\n"), strings.Join(want, "\n"))
	}
}
