package sut

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestTokenFlow(t *testing.T) {
	t.Parallel()
	st := startStack(t, stackOpts{backs: 1})
	// A second front with the same secret must accept the first one's tokens.
	other, err := NewFront(FrontConfig{Secret: st.secret, BackURLs: []string{st.backs[0].URL}, ExternalURL: st.external.URL})
	if err != nil {
		t.Fatal(err)
	}
	front2 := startServer(t, other.Serve)
	// A front with another secret must not.
	stranger, err := NewFront(FrontConfig{Secret: "another-secret", BackURLs: []string{st.backs[0].URL}})
	if err != nil {
		t.Fatal(err)
	}
	front3 := startServer(t, stranger.Serve)

	tok := getToken(t, st.front.URL)
	foreign := getToken(t, front3.URL)
	cpr := CPRs(DefaultSeed, 1)[0]
	q := "/allergies?cpr=" + cpr
	tampered := tok[:len(tok)-2] + "AA"
	if tampered == tok {
		tampered = tok[:len(tok)-2] + "BB"
	}
	cases := []struct {
		name   string
		url    string
		auth   string
		status int
	}{
		{"no token", st.front.URL + q, "", http.StatusUnauthorized},
		{"not bearer", st.front.URL + q, "Basic cGVyZjpwZXJm", http.StatusUnauthorized},
		{"garbage", st.front.URL + q, "Bearer garbage", http.StatusUnauthorized},
		{"tampered", st.front.URL + q, "Bearer " + tampered, http.StatusUnauthorized},
		{"other secret", st.front.URL + q, "Bearer " + foreign, http.StatusUnauthorized},
		{"valid", st.front.URL + q, "Bearer " + tok, http.StatusOK},
		{"valid on another instance", front2.URL + q, "Bearer " + tok, http.StatusOK},
		{"lower-case scheme", st.front.URL + q, "bearer " + tok, http.StatusOK},
		{"malformed cpr", st.front.URL + "/allergies?cpr=12345", "Bearer " + tok, http.StatusBadRequest},
		{"cpr with letters", st.front.URL + "/allergies?cpr=12345678ab", "Bearer " + tok, http.StatusBadRequest},
		{"unknown cpr", st.front.URL + "/allergies?cpr=0101000000", "Bearer " + tok, http.StatusNotFound},
	}
	for _, c := range cases {
		var r reply
		if c.auth == "" {
			r = get(t, c.url)
		} else {
			r = get(t, c.url, "Authorization", c.auth)
		}
		if r.status != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.status, c.status, r.body)
		}
		if c.status == http.StatusOK {
			var list AllergyList
			if err := json.Unmarshal([]byte(r.body), &list); err != nil || list.CPR != cpr || len(list.Allergies) == 0 {
				t.Errorf("%s: body %q (%v)", c.name, r.body, err)
			}
		}
	}
	for _, body := range []string{``, `{}`, `{"user":""}`, `not json`} {
		resp, err := http.Post(st.front.URL+"/token", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST /token %q: status %d, want 400", body, resp.StatusCode)
		}
	}
}

func TestTokenSigner(t *testing.T) {
	t.Parallel()
	s := tokenSigner{secret: []byte("k"), ttl: time.Minute}
	now := time.Unix(1_700_000_000, 0)
	tok := s.issue("a|b.c", now)
	if tok == s.issue("a|b.c", now) {
		t.Error("two tokens for the same user and time are equal; want a random nonce")
	}
	if u, err := s.verify(tok, now.Add(59*time.Second)); err != nil || u != "a|b.c" {
		t.Errorf("fresh token: user %q err %v", u, err)
	}
	if _, err := s.verify(tok, now.Add(time.Minute)); err != errTokenExpired {
		t.Errorf("expired token: err %v", err)
	}
	if _, err := (tokenSigner{secret: []byte("other"), ttl: time.Minute}).verify(tok, now); err != errTokenSignature {
		t.Errorf("other secret: err %v", err)
	}
	for _, bad := range []string{"", ".", "abc", "a.b", "!!!.!!!"} {
		if _, err := s.verify(bad, now); err == nil {
			t.Errorf("verify(%q) accepted", bad)
		}
	}
}

func TestRoundRobin(t *testing.T) {
	t.Parallel()
	st := startStack(t, stackOpts{backs: 2})
	tok := getToken(t, st.front.URL)
	const n = 10
	for _, cpr := range CPRs(DefaultSeed, n) {
		if r := get(t, st.front.URL+"/allergies?cpr="+cpr, "Authorization", "Bearer "+tok); r.status != http.StatusOK {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
	}
	st.stopAll()
	for _, p := range st.backLogs {
		if got := len(readLines(t, p)); got != n/2 {
			t.Errorf("%s: %d lines, want %d (round-robin over 2 backs)", p, got, n/2)
		}
	}
}

func TestMessageIDPropagation(t *testing.T) {
	t.Parallel()
	st := startStack(t, stackOpts{backs: 1})
	tok := getToken(t, st.front.URL)
	cprs := CPRs(DefaultSeed, 2)
	const given = "perf-msg-0001"
	r := get(t, st.front.URL+"/allergies?cpr="+cprs[0], "Authorization", "Bearer "+tok, MessageIDHeader, given)
	if r.status != http.StatusOK || r.header.Get(MessageIDHeader) != given {
		t.Fatalf("status %d, echoed id %q", r.status, r.header.Get(MessageIDHeader))
	}
	r = get(t, st.front.URL+"/allergies?cpr="+cprs[1], "Authorization", "Bearer "+tok)
	generated := r.header.Get(MessageIDHeader)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(generated) {
		t.Fatalf("generated id %q", generated)
	}
	st.stopAll()

	accessRE := formatRE(t, AccessLogFormat)
	extRE := formatRE(t, ExternalLogFormat)
	for _, id := range []string{given, generated} {
		count := func(path string, re *regexp.Regexp) (n int, services []string) {
			for _, l := range readLines(t, path) {
				f := fields(t, re, l)
				if f["http_x_message_id"] == id {
					n++
					services = append(services, f["service"])
				}
			}
			return n, services
		}
		if n, _ := count(st.frontLog, accessRE); n != 1 {
			t.Errorf("id %s: %d front access lines, want 1", id, n)
		}
		if n, _ := count(st.backLogs[0], accessRE); n != 1 {
			t.Errorf("id %s: %d back access lines, want 1", id, n)
		}
		if n, _ := count(st.dir+"/external-access.log", accessRE); n != 3 {
			t.Errorf("id %s: %d external access lines, want 3", id, n)
		}
		n, services := count(st.extCallLog, extRE)
		if n != 3 || strings.Join(services, ",") != "audit,consent,relation" {
			t.Errorf("id %s: external-call log has services %v, want audit,consent,relation in order", id, services)
		}
	}
}

func TestExternalFailure(t *testing.T) {
	t.Parallel()
	failing := fastServices()
	failing[1].FailurePercent = 100 // consent
	// relation never answers in time: it waits an hour, or until the
	// front gives up on it. The front's limit of 3 s is far beyond what
	// the fast services take even on a loaded machine (a limit of 100 ms
	// once timed out a 2 ms call under load, naming the wrong service).
	slow := fastServices()
	slow[2].Latency = Latency{Kind: LatencyFixed, Median: time.Hour} // relation
	cases := []struct {
		name     string
		opts     stackOpts
		want     string
		outcomes string // outcomes in the external-call log
	}{
		{"sequential 503", stackOpts{services: failing}, "consent: Service Unavailable", "200,503"},
		{"parallel 503", stackOpts{services: failing, parallel: true}, "consent: Service Unavailable", "200,503,200"},
		{"timeout", stackOpts{services: slow, timeout: 3 * time.Second}, "relation: timeout", "200,200,timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			st := startStack(t, c.opts)
			tok := getToken(t, st.front.URL)
			r := get(t, st.front.URL+"/allergies?cpr="+CPRs(DefaultSeed, 1)[0], "Authorization", "Bearer "+tok)
			var body errorBody
			if err := json.Unmarshal([]byte(r.body), &body); err != nil {
				t.Fatalf("body %q: %v", r.body, err)
			}
			if r.status != http.StatusInternalServerError || body.Error != c.want {
				t.Errorf("got %d %q, want 500 %q", r.status, body.Error, c.want)
			}
			st.stopAll()
			extRE := formatRE(t, ExternalLogFormat)
			var outcomes []string
			for _, l := range readLines(t, st.extCallLog) {
				outcomes = append(outcomes, fields(t, extRE, l)["outcome"])
			}
			// Parallel calls complete in any order; compare as multisets.
			if !sameMultiset(outcomes, strings.Split(c.outcomes, ",")) {
				t.Errorf("external-call outcomes %v, want %s", outcomes, c.outcomes)
			}
			if n := len(readLines(t, st.backLogs[0])); n != 0 {
				t.Errorf("back was called %d times after an external failure", n)
			}
			lines := readLines(t, st.frontLog)
			if last := fields(t, formatRE(t, AccessLogFormat), lines[len(lines)-1]); last["status"] != "500" {
				t.Errorf("front access log status %s, want 500", last["status"])
			}
		})
	}
}

func sameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestBackDirect(t *testing.T) {
	t.Parallel()
	st := startStack(t, stackOpts{})
	back := st.backs[0].URL
	cpr := CPRs(DefaultSeed, 1)[0]
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/patients/" + cpr + "/allergies", http.StatusOK},
		{"/patients/0101000000/allergies", http.StatusNotFound},
		{"/patients/12x/allergies", http.StatusBadRequest},
		{"/health", http.StatusOK},
	} {
		if r := get(t, back+c.path); r.status != c.status {
			t.Errorf("GET %s: %d, want %d (%s)", c.path, r.status, c.status, r.body)
		}
	}
	for _, u := range []string{st.front.URL, st.external.URL} {
		if r := get(t, u+"/health"); r.status != http.StatusOK {
			t.Errorf("GET %s/health: %d", u, r.status)
		}
	}
	st.stopAll()
	// Health probes are not logged; the three reads are.
	if n := len(readLines(t, st.backLogs[0])); n != 3 {
		t.Errorf("back access log has %d lines, want 3", n)
	}
}

// TestShutdownFlushes sets a flush interval far beyond the test, so every
// line on disk afterwards was written by the graceful stop.
func TestShutdownFlushes(t *testing.T) {
	t.Parallel()
	st := startStack(t, stackOpts{backs: 2, flush: time.Hour})
	tok := getToken(t, st.front.URL)
	const n = 20
	for _, cpr := range CPRs(DefaultSeed, n) {
		if r := get(t, st.front.URL+"/allergies?cpr="+cpr, "Authorization", "Bearer "+tok); r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
	}
	if got := len(readLines(t, st.frontLog)); got != 0 {
		t.Fatalf("%d front lines on disk before shutdown; the test needs them buffered", got)
	}
	st.stopAll()
	if got := len(readLines(t, st.frontLog)); got != n+1 {
		t.Errorf("front access log: %d lines, want %d (token + reads)", got, n+1)
	}
	if got := len(readLines(t, st.extCallLog)); got != 3*n {
		t.Errorf("external-call log: %d lines, want %d", got, 3*n)
	}
	if got := len(readLines(t, st.backLogs[0])) + len(readLines(t, st.backLogs[1])); got != n {
		t.Errorf("back access logs: %d lines, want %d", got, n)
	}
}

// TestLogFormat parses every line of every log with a regexp derived from the
// documented format strings and checks each field's meaning.
func TestLogFormat(t *testing.T) {
	t.Parallel()
	before := time.Now().Add(-time.Second)
	st := startStack(t, stackOpts{backs: 1})
	tok := getToken(t, st.front.URL)
	const n = 5
	for _, cpr := range CPRs(DefaultSeed, n) {
		get(t, st.front.URL+"/allergies?cpr="+cpr, "Authorization", "Bearer "+tok)
	}
	st.stopAll()
	after := time.Now().Add(time.Second)

	accessRE := formatRE(t, AccessLogFormat)
	millisRE := regexp.MustCompile(`^\d+\.\d{3}$`)
	checkTime := func(s string) {
		ts, err := time.Parse(TimeLayout, s)
		if err != nil || !strings.HasSuffix(s, "Z") || ts.Before(before) || ts.After(after) {
			t.Errorf("time %q: %v (want UTC within the test)", s, err)
		}
	}
	frontMillis := map[string]float64{}
	for _, p := range []string{st.frontLog, st.backLogs[0]} {
		lines := readLines(t, p)
		if len(lines) == 0 {
			t.Fatalf("%s is empty", p)
		}
		for _, l := range lines {
			f := fields(t, accessRE, l)
			checkTime(f["time_iso8601"])
			if f["request_method"] != "GET" && f["request_method"] != "POST" {
				t.Errorf("method %q", f["request_method"])
			}
			if !strings.HasPrefix(f["uri"], "/") || strings.Contains(f["uri"], "?") {
				t.Errorf("uri %q", f["uri"])
			}
			if code, err := strconv.Atoi(f["status"]); err != nil || code != 200 {
				t.Errorf("status %q", f["status"])
			}
			if !millisRE.MatchString(f["request_time_ms"]) {
				t.Errorf("request_time_ms %q", f["request_time_ms"])
			}
			if f["remote_addr"] != "127.0.0.1" {
				t.Errorf("remote_addr %q", f["remote_addr"])
			}
			if p == st.frontLog {
				frontMillis[f["http_x_message_id"]], _ = strconv.ParseFloat(f["request_time_ms"], 64)
			}
		}
	}
	// The front's time includes its external calls: the "with and without
	// MSB" subtraction of the reference must never go negative.
	extRE := formatRE(t, ExternalLogFormat)
	extMillis := map[string]float64{}
	lines := readLines(t, st.extCallLog)
	if len(lines) != 3*n {
		t.Fatalf("external-call log has %d lines, want %d", len(lines), 3*n)
	}
	for _, l := range lines {
		f := fields(t, extRE, l)
		checkTime(f["time_iso8601"])
		if !millisRE.MatchString(f["request_time_ms"]) || f["outcome"] != "200" {
			t.Errorf("line %q", l)
		}
		ms, _ := strconv.ParseFloat(f["request_time_ms"], 64)
		extMillis[f["http_x_message_id"]] += ms
	}
	for id, ext := range extMillis {
		total, ok := frontMillis[id]
		if !ok || total < ext {
			t.Errorf("id %s: front %.3f ms, external calls %.3f ms", id, total, ext)
		}
	}
}

func TestFrontConfigErrors(t *testing.T) {
	t.Parallel()
	good := FrontConfig{Secret: "s", BackURLs: []string{"http://127.0.0.1:1"}}
	cases := map[string]func(*FrontConfig){
		"no secret":     func(c *FrontConfig) { c.Secret = "" },
		"no backs":      func(c *FrontConfig) { c.BackURLs = nil },
		"relative back": func(c *FrontConfig) { c.BackURLs = []string{"127.0.0.1:1"} },
		"bad external":  func(c *FrontConfig) { c.ExternalURL = "ftp://x" },
		"bad service":   func(c *FrontConfig) { c.ExternalServices = []string{"Audit Log"} },
		"log in a file": func(c *FrontConfig) { c.AccessLog = "/dev/null/x.log" },
	}
	for name, mutate := range cases {
		c := good
		mutate(&c)
		if f, err := NewFront(c); err == nil {
			f.Close()
			t.Errorf("%s: accepted", name)
		}
	}
	f, err := NewFront(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	if _, err := NewBack(context.Background(), BackConfig{}); err == nil {
		t.Error("back without a database path accepted")
	}
}
