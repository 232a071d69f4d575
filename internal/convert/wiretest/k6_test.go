package wiretest

import (
	"regexp"
	"strings"
	"testing"
)

// The k6 scripts of testdata/k6 (provenance in testdata/README.md) under
// real k6 and, converted, under plateau, through the recorder.

// pizza answers like QuickPizza: a recommendation for POST /api/pizza.
var pizza = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`^/api/pizza$`), Resp: Response{Body: `{"pizza":{"id":7,"name":"Margherita","ingredients":[{"name":"tomato"}]}}`}},
	{Path: regexp.MustCompile(`^/$`), Resp: Response{Header: map[string]string{"Content-Type": "text/html"}, Body: "<html>QuickPizza</html>"}},
}

// quickpizzaEnv points the scripts' BASE_URL at a name (k6 does not proxy
// loopback hosts); the recorder answers for it.
var quickpizzaEnv = map[string]string{"BASE_URL": "http://quickpizza.test"}

// noRemote points jslib imports at the local stand-in.
var noRemote = Replace{regexp.MustCompile(`https://jslib\.k6\.io/k6-summary/[^"']+`), "./k6-summary.js"}

// TestK6QuickPizzaBasic: 5 users for 5 s, a JSON.stringify body with an
// Authorization header (a secret: the plan reads it from the
// environment), a check and a 1 s sleep.
func TestK6QuickPizzaBasic(t *testing.T) {
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/quickpizza", Script: "01.basic.js", Rules: pizza, Env: quickpizzaEnv})
	if n := len(o.K6); n < 15 {
		t.Fatalf("k6 sent %d requests, want about 25 (5 users, 5 s, 1 s sleeps)", n)
	}
	if strings.Contains(o.Plan, "abcdef0123456789") {
		t.Errorf("the plan holds the script's token:\n%s", o.Plan)
	}
}

// TestK6QuickPizzaLifecycle: stages of users (ramping-vus, shortened),
// setup() with a status test that throws, and teardown().
func TestK6QuickPizzaLifecycle(t *testing.T) {
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/quickpizza", Script: "03.lifecycle.js", Rules: pizza, Env: quickpizzaEnv,
		Rewrite: []Replace{{regexp.MustCompile(`duration: '10s'`), "duration: '4s'"}, {regexp.MustCompile(`duration: '5s'`), "duration: '2s'"}}})
	setups := 0
	for _, q := range o.K6 {
		if q.User == "setup/1" {
			setups++
		}
	}
	if setups != 1 {
		t.Errorf("k6's setup sent %d requests, want 1", setups)
	}
}

// TestK6QuickPizzaScenarios: two scenarios running one exec function
// (constant-vus, then ramping-vus after a startTime), tokens from a
// SharedArray over a member of a JSON file picked at random.
func TestK6QuickPizzaScenarios(t *testing.T) {
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/quickpizza", Script: "09.data.js", Rules: pizza, Env: quickpizzaEnv,
		Rewrite: []Replace{noRemote,
			{regexp.MustCompile(`duration: "10s"`), `duration: "3s"`}, {regexp.MustCompile(`startTime: "10s"`), `startTime: "3s"`},
			{regexp.MustCompile(`duration: '10s'`), "duration: '3s'"}, {regexp.MustCompile(`duration: '5s'`), "duration: '2s'"}},
		// A token of the file is the same value on both sides when it
		// is one of the file's rows.
		Compare: Options{Normalize: []Replace{{regexp.MustCompile(`Token [A-Za-z0-9]{16}`), "Token {row}"}}},
	})
	groups := map[string]bool{}
	for _, q := range o.Plateau {
		g, _, _ := strings.Cut(q.User, "/")
		groups[g] = true
	}
	if !groups["smoke"] || !groups["stress"] {
		t.Errorf("plateau ran the workloads %v, want smoke and stress", groups)
	}
}

// TestK6QuickPizzaArrivalRate: constant-arrival-rate (20/s, shortened to
// 4 s): both tools start the same number of iterations.
func TestK6QuickPizzaArrivalRate(t *testing.T) {
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/quickpizza", Script: "08.arrival-rate.js", Rules: pizza, Env: quickpizzaEnv,
		Rewrite: []Replace{noRemote, {regexp.MustCompile(`duration: '30s'`), "duration: '4s'"}},
		Compare: Options{Expected: []Expect{
			{Kind: "users", Why: "open model: k6 hands the iterations to its 60 pre-allocated VUs in turn, plateau to as few users as the rate needs"},
			{Kind: "think", Why: "the gap per user follows from how many users share the rate; the rate itself is asserted below"},
		}}})
	count := func(rs []Request) int {
		n := 0
		for _, q := range rs {
			if q.Path == "/api/pizza" {
				n++
			}
		}
		return n
	}
	k, p := count(o.K6), count(o.Plateau)
	// 20/s for 4 s: 80 iterations, give or take the edges.
	if k < 70 || k > 90 || p < 70 || p > 90 {
		t.Errorf("iterations: k6 %d, plateau %d; want about 80 each", k, p)
	}
}

// shop answers the units script: a login with a token, a list whose first
// item id the next request sends, a cart that is open and names the next
// step in a header.
var shop6 = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`^/login$`), Resp: Response{Body: `{"token":"tok-42"}`}},
	{Path: regexp.MustCompile(`^/items$`), Resp: Response{Body: `{"items":[{"id":"item-{{q:owner}}"},{"id":"x"}]}`}},
	{Method: "POST", Path: regexp.MustCompile(`^/cart$`), Resp: Response{Header: map[string]string{"X-Next": "c-{{n}}", "Content-Type": "application/json"}, Body: `{"state":"open"}`}},
}

// TestK6Units runs testdata/k6/units/flow.js (one of each construct the
// converter reads) under both tools: same requests, values, order and
// counts.
func TestK6Units(t *testing.T) {
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/units", Script: "flow.js", Rules: shop6,
		Env: map[string]string{"BASE": "http://shop.test"},
		Compare: Options{
			// The cart id is the recorder's request number; the weighted
			// branch differs by chance.
			Normalize:      []Replace{{regexp.MustCompile(`/cart/c-\d+`), "/cart/{id}"}},
			RandomBranches: true,
		}})
	if n := len(o.K6); n != 1+3*4*9 {
		t.Errorf("k6 sent %d requests, want %d (setup, then 3 users × 4 iterations × 9)", n, 1+3*4*9)
	}
	if len(o.Plateau) != len(o.K6) {
		t.Errorf("plateau sent %d requests, k6 %d", len(o.Plateau), len(o.K6))
	}
}

// TestK6QuickPizzaLoginAction: a CSRF token from a cookie, a login whose
// token every later request sends, and a pizza id from one response in
// the next body.
func TestK6QuickPizzaLoginAction(t *testing.T) {
	rules := []Rule{
		{Method: "POST", Path: regexp.MustCompile(`^/api/csrf-token$`), Resp: Response{Header: map[string]string{"Set-Cookie": "csrf_token=csrf-{{n}}; Path=/"}, Body: "{}"}},
		{Method: "POST", Path: regexp.MustCompile(`^/api/users/token/login$`), Resp: Response{Body: `{"token":"tok{{n}}"}`}},
		{Method: "POST", Path: regexp.MustCompile(`^/api/ratings$`), Resp: Response{Status: 201, Body: `{"id":1}`}},
	}
	o := RunK6Case(t, K6Case{Dir: "testdata/k6/quickpizza", Script: "17.login-action.js", Rules: append(rules, pizza...), Env: quickpizzaEnv,
		Compare: Options{
			// The recorder numbers its answers: the CSRF cookie and token
			// differ by request number, the same on both sides in kind.
			Normalize: []Replace{{regexp.MustCompile(`csrf-\d+`), "csrf-{n}"}, {regexp.MustCompile(`tok\d+`), "tok{n}"}},
		}})
	var csrf, auth int
	for _, q := range o.Plateau {
		if q.Path == "/api/users/token/login" && strings.Contains(q.Body, `"csrf":"csrf-`) {
			csrf++
		}
		if q.Path == "/api/ratings" && strings.HasPrefix(q.Header.Get("Authorization"), "token tok") {
			auth++
		}
	}
	if csrf == 0 || auth == 0 {
		t.Errorf("plateau sent the CSRF cookie value in %d logins and the login token in %d ratings", csrf, auth)
	}
	// pizza_id comes from the response's JSON number 7: sent as the
	// number, as k6 sends it (the body is compared byte for byte above).
	ratings := 0
	for _, q := range o.Plateau {
		if q.Path == "/api/ratings" {
			ratings++
			if !strings.Contains(q.Body, `"pizza_id":7`) {
				t.Errorf("rating body %s, want pizza_id as the number 7", q.Body)
			}
		}
	}
	if ratings == 0 {
		t.Error("plateau sent no rating")
	}
}
