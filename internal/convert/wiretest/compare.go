package wiretest

import (
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Diff is one difference between the two request streams.
type Diff struct {
	Kind    string // users, endpoint, header, query, body, part, order, first, mix, think, ramp, rate
	Subject string // the endpoint ("GET /path") or header name it is about
	JMeter  string
	Plateau string
}

func (d Diff) String() string {
	return fmt.Sprintf("%s %s: JMeter %s; plateau %s", d.Kind, d.Subject, d.JMeter, d.Plateau)
}

// Options tune a comparison.
type Options struct {
	// Normalize rewrites volatile text (ids the server made up, random
	// values) in paths, query, header values and bodies before they are
	// compared; UUIDs, ISO times and 10+ digit numbers (timestamps) are
	// always normalized.
	Normalize []Replace
	// ThinkTolerance is twice the relative tolerance of the mean think
	// time (default 0.3: 15 %).
	ThinkTolerance float64
	// Expected are differences the test explains; each must occur (an
	// explanation of nothing is stale) and every other difference fails.
	Expected []Expect
	// Data maps the values of the plan's data files (4 characters or
	// more) to the file they come from ("csv:users.csv"); set by Run. A
	// value sent from a data file is compared as "a row of that file": a
	// plan whose random branches read rows at different moments still
	// matches, a value from nowhere (an empty column, a literal) does not.
	Data map[string]string
	// RandomBranches says the plan picks its branches at random: an
	// endpoint or transition one side never sent is a difference only
	// when the other side's volume makes missing it unlikely.
	RandomBranches bool
	// RampUp is the bounds' ramp (set by Run); without one the spread of
	// first requests is not compared.
	RampUp time.Duration
}

// Replace rewrites matches of Re with With.
type Replace struct {
	Re   *regexp.Regexp
	With string
}

// Expect explains the differences of a kind whose subject matches.
type Expect struct {
	Kind    string
	Subject *regexp.Regexp
	Why     string
}

var (
	uuidRe = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	longRe = regexp.MustCompile(`\d{10,}`)
	timeRe = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?`)
)

func (o *Options) norm(s string) string {
	s = uuidRe.ReplaceAllString(s, "{uuid}")
	s = timeRe.ReplaceAllString(s, "{time}")
	s = longRe.ReplaceAllString(s, "{n}")
	for _, r := range o.Normalize {
		s = r.Re.ReplaceAllString(s, r.With)
	}
	if len(o.Data) > 0 {
		s = tokenRe.ReplaceAllStringFunc(s, func(t string) string {
			if f, ok := o.Data[t]; ok {
				return "{" + f + "}"
			}
			return t
		})
	}
	return s
}

var tokenRe = regexp.MustCompile(`[A-Za-z0-9_.\-\[\]]{4,}`)

// Endpoint names a request by method, host and normalized path.
func (o *Options) endpoint(q Request) string {
	return q.Method + " " + q.Host + o.norm(q.Path)
}

// Result is a comparison's outcome.
type Result struct {
	Diffs       []Diff // every difference found
	Unexplained []Diff // those no Expect covers
	Stale       []Expect
	Summary     []string // figures of both sides, for the log
}

// Compare compares the request streams of JMeter (j) and plateau (p).
func Compare(j, p []Request, o Options) Result {
	if o.ThinkTolerance == 0 {
		o.ThinkTolerance = 0.3
	}
	var r Result
	add := func(kind, subj, jv, pv string) { r.Diffs = append(r.Diffs, Diff{kind, subj, jv, pv}) }

	ju, pu := byUser(j), byUser(p)
	// Users: the same keys, per group.
	jg, pg := groups(ju), groups(pu)
	for g, n := range jg {
		if pg[g] != n {
			add("users", g, fmt.Sprint(n, " users"), fmt.Sprint(pg[g], " users"))
		}
	}
	for g, n := range pg {
		if _, ok := jg[g]; !ok {
			add("users", g, "0 users", fmt.Sprint(n, " users"))
		}
	}

	// Endpoints and their mix.
	jc, pc := o.counts(j), o.counts(p)
	for _, e := range sortedKeys(jc, pc) {
		nj, np := jc[e], pc[e]
		switch {
		case np == 0:
			if o.expect(nj, len(j), len(p)) {
				add("endpoint", e, fmt.Sprintf("sent it %d times", nj), "never")
			}
		case nj == 0:
			if o.expect(np, len(p), len(j)) {
				add("endpoint", e, "never", fmt.Sprintf("sent it %d times", np))
			}
		default:
			sj, sp := float64(nj)/float64(len(j)), float64(np)/float64(len(p))
			tol := 0.05 + 3*math.Sqrt(sj*(1-sj)/float64(len(j))+sp*(1-sp)/float64(len(p)))
			if math.Abs(sj-sp) > tol {
				add("mix", e, pct(sj), pct(sp))
			}
		}
	}

	// Headers, query and body per endpoint present on both sides.
	jv, jn := o.values(j)
	pv, pn := o.values(p)
	for _, key := range sortedKeys(jv, pv) {
		a, b := jv[key], pv[key]
		ep, field, _ := strings.Cut(key, "\x00")
		if jc[ep] == 0 || pc[ep] == 0 {
			continue
		}
		kind, name, _ := strings.Cut(field, ":")
		switch {
		case len(b) == 0:
			add(kind, ep+" "+name, "sends "+sample(a), "does not send it")
		case len(a) == 0:
			add(kind, ep+" "+name, "does not send it", "sends "+sample(b))
		case !intersects(a, b):
			add(kind, ep+" "+name, sample(a), sample(b))
		case len(a) == 1 && jn[key] >= minSame && len(b) >= 3:
			// One side repeats a value the other varies (a counter that
			// never counts): sharing that one value is not agreement. 20
			// sends of one value where the other side drew 3 or more is
			// not chance (a pick among 3 repeats 20 times with p < 1e-8).
			add(kind, ep+" "+name, fmt.Sprintf("always %s (%d times)", sample(a), jn[key]), fmt.Sprintf("%d values: %s", len(b), sample(b)))
		case len(b) == 1 && pn[key] >= minSame && len(a) >= 3:
			add(kind, ep+" "+name, fmt.Sprintf("%d values: %s", len(a), sample(a)), fmt.Sprintf("always %s (%d times)", sample(b), pn[key]))
		}
	}

	// Order: the transitions from one endpoint to the next within a
	// user's stream, and the first request of each user.
	jt, pt := o.transitions(ju), o.transitions(pu)
	for _, tr := range sortedKeys(jt, pt) {
		a, b := jt[tr], pt[tr]
		// A transition seen once may be the cut at the end of the run.
		switch {
		case b == 0 && a > 1 && o.expect(a, len(j), len(p)):
			add("order", tr, fmt.Sprintf("%d times", a), "never")
		case a == 0 && b > 1 && o.expect(b, len(p), len(j)):
			add("order", tr, "never", fmt.Sprintf("%d times", b))
		}
	}
	jf, pf := o.firsts(ju), o.firsts(pu)
	for _, f := range sortedKeys(jf, pf) {
		if jf[f] == 0 || pf[f] == 0 {
			add("first", f, fmt.Sprintf("%d users start with it", jf[f]), fmt.Sprintf("%d users", pf[f]))
		}
	}

	// Think times: gaps between a user's consecutive requests. Their
	// means are compared with a tolerance of three standard errors (the
	// plans draw random waits), 15 % and 60 ms (JMeter's own time between
	// requests on a cold JVM).
	jg2, pg2 := gaps(ju), gaps(pu)
	jm, pm := median(jg2), median(pg2)
	jmean, jvar := meanVar(jg2)
	pmean, pvar := meanVar(pg2)
	se := math.Sqrt(jvar/float64(max(len(jg2), 1)) + pvar/float64(max(len(pg2), 1)))
	if math.Abs(jmean-pmean) > 3*se+o.ThinkTolerance/2*jmean+float64(60*time.Millisecond) {
		add("think", "mean gap between a user's requests", time.Duration(jmean).Round(time.Millisecond).String(), time.Duration(pmean).Round(time.Millisecond).String())
	}
	// Ramp: the spread of users' first requests, when the bounds ramp
	// (a first request also waits its think time: that is allowed for).
	js, ps := spread(ju), spread(pu)
	if o.RampUp > 0 && math.Abs(float64(js-ps)) > 0.25*float64(o.RampUp)+float64(time.Second)+3*math.Sqrt(jvar+pvar) {
		add("ramp", "first requests spread over", js.Round(time.Millisecond).String(), ps.Round(time.Millisecond).String())
	}
	// Rate: requests per user per second of its active time — the inverse
	// of the mean gap, which the think check bounds with the right
	// statistics; reported, not compared a second time.
	jr, pr := rate(ju), rate(pu)
	r.Summary = append(r.Summary,
		fmt.Sprintf("requests: JMeter %d, plateau %d; users: %d, %d; endpoints: %d, %d", len(j), len(p), len(ju), len(pu), len(jc), len(pc)),
		fmt.Sprintf("gap between a user's requests: JMeter median %v mean %v, plateau median %v mean %v; ramp spread %v, %v; rate/user %.2f/s, %.2f/s",
			jm.Round(time.Millisecond), time.Duration(jmean).Round(time.Millisecond), pm.Round(time.Millisecond), time.Duration(pmean).Round(time.Millisecond),
			js.Round(time.Millisecond), ps.Round(time.Millisecond), jr, pr))

	used := make([]bool, len(o.Expected))
	for _, d := range r.Diffs {
		ok := false
		for i, e := range o.Expected {
			if e.Kind == d.Kind && (e.Subject == nil || e.Subject.MatchString(d.Subject)) {
				used[i], ok = true, true
			}
		}
		if !ok {
			r.Unexplained = append(r.Unexplained, d)
		}
	}
	for i, u := range used {
		if !u {
			r.Stale = append(r.Stale, o.Expected[i])
		}
	}
	return r
}

func pct(f float64) string { return fmt.Sprintf("%.1f %%", 100*f) }

func byUser(rs []Request) map[string][]Request {
	m := map[string][]Request{}
	for _, q := range rs {
		m[q.User] = append(m[q.User], q)
	}
	return m
}

func groups(u map[string][]Request) map[string]int {
	m := map[string]int{}
	for k := range u {
		g, _, _ := strings.Cut(k, "/")
		m[g]++
	}
	return m
}

func (o *Options) counts(rs []Request) map[string]int {
	m := map[string]int{}
	for _, q := range rs {
		m[o.endpoint(q)]++
	}
	return m
}

// values collects, per endpoint, the normalized values of each header,
// query parameter, form field (or whole body) sent, and how many times
// each field was sent.
func (o *Options) values(rs []Request) (map[string]map[string]bool, map[string]int) {
	m := map[string]map[string]bool{}
	sent := map[string]int{}
	put := func(ep, field, v string) {
		k := ep + "\x00" + field
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		sent[k]++
		if len(m[k]) < 500 {
			m[k][o.norm(v)] = true
		}
	}
	for _, q := range rs {
		ep := o.endpoint(q)
		// A value naming the user who sent it (the recorder's canned
		// tokens carry the user key) is the same value for every user.
		self := func(v string) string {
			if q.User == "" {
				return v
			}
			return strings.ReplaceAll(v, q.User, "{self}")
		}
		boundary := multipartBoundary(q.Header.Get("Content-Type"))
		for h, vs := range q.Header {
			v := strings.Join(vs, ", ")
			if h == "Content-Type" && boundary != "" {
				// Each tool draws its own boundary: the rest of the
				// header is compared.
				v = strings.ReplaceAll(v, boundary, "{boundary}")
			}
			put(ep, "header:"+h, self(v))
		}
		if q.Query != "" {
			// Raw: the encoding on the wire is compared too.
			for _, kv := range strings.Split(q.Query, "&") {
				k, v, _ := strings.Cut(kv, "=")
				put(ep, "query:"+k, self(v))
			}
		}
		if q.Body != "" {
			ct := strings.Join(q.Header["Content-Type"], "")
			if strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
				for _, kv := range strings.Split(q.Body, "&") {
					k, v, _ := strings.Cut(kv, "=")
					ku, _ := url.QueryUnescape(k)
					put(ep, "body:"+ku, self(v))
				}
			} else if boundary != "" {
				parts(q.Body, boundary, func(field, v string) { put(ep, field, self(v)) })
			} else {
				put(ep, "body:", self(q.Body))
			}
		}
	}
	return m, sent
}

func (o *Options) transitions(u map[string][]Request) map[string]int {
	m := map[string]int{}
	for _, rs := range u {
		for i := 1; i < len(rs); i++ {
			m[o.endpoint(rs[i-1])+" → "+o.endpoint(rs[i])]++
		}
	}
	return m
}

func (o *Options) firsts(u map[string][]Request) map[string]int {
	m := map[string]int{}
	for k, rs := range u {
		if strings.HasPrefix(k, "setup/") || strings.HasPrefix(k, "teardown/") {
			continue
		}
		m[o.endpoint(rs[0])]++
	}
	return m
}

func gaps(u map[string][]Request) []time.Duration {
	var g []time.Duration
	for _, rs := range u {
		for i := 1; i < len(rs); i++ {
			g = append(g, rs[i].At-rs[i-1].At)
		}
	}
	return g
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func spread(u map[string][]Request) time.Duration {
	var lo, hi time.Duration = -1, 0
	for k, rs := range u {
		if strings.HasPrefix(k, "setup/") || strings.HasPrefix(k, "teardown/") {
			continue
		}
		a := rs[0].At
		if lo < 0 || a < lo {
			lo = a
		}
		if a > hi {
			hi = a
		}
	}
	if lo < 0 {
		return 0
	}
	return hi - lo
}

// rate is the mean over users of requests per second between a user's
// first and last request (users with fewer than 3 requests left out).
func rate(u map[string][]Request) float64 {
	var sum float64
	n := 0
	for k, rs := range u {
		if len(rs) < 3 || strings.HasPrefix(k, "setup/") || strings.HasPrefix(k, "teardown/") {
			continue
		}
		d := (rs[len(rs)-1].At - rs[0].At).Seconds()
		if d <= 0 {
			continue
		}
		sum += float64(len(rs)-1) / d
		n++
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func intersects(a, b map[string]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

func sample(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	more := ""
	if len(keys) > 3 {
		more = fmt.Sprintf(" (+%d more)", len(keys)-3)
		keys = keys[:3]
	}
	for i, k := range keys {
		if len(k) > 400 {
			k = k[:400] + "…"
		}
		keys[i] = fmt.Sprintf("%q", k)
	}
	return strings.Join(keys, ", ") + more
}

func sortedKeys[V any](a, b map[string]V) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]V{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// meanVar is the mean and variance (ns, ns²) of gaps under a minute.
func meanVar(d []time.Duration) (float64, float64) {
	var n, sum, sq float64
	for _, x := range d {
		if x > time.Minute {
			continue
		}
		f := float64(x)
		n++
		sum += f
		sq += f * f
	}
	if n == 0 {
		return 0, 0
	}
	m := sum / n
	return m, math.Max(sq/n-m*m, 0)
}

// expect reports whether something seen n times in a stream of total
// requests should have been seen at least once in a stream of other
// requests. A plan without random branches must repeat everything. With
// RandomBranches its expected count there must be at least 20: a branch
// of a few requests runs once per iteration, and a branch taken with
// probability p in k iterations is missed with probability (1-p)^k —
// never seeing it is chance, not a difference.
func (o *Options) expect(n, total, other int) bool {
	if !o.RandomBranches {
		return n > 0
	}
	if total == 0 {
		return false
	}
	return float64(n)*float64(other)/float64(total) >= 20
}

// multipartBoundary returns the boundary of a multipart Content-Type, or
// "".
func multipartBoundary(ct string) string {
	if ct == "" {
		return ""
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !strings.HasPrefix(mt, "multipart/") {
		return ""
	}
	return params["boundary"]
}

// minSame is how many times one side must send a single value of a field
// the other side varies for the comparison to call it a difference.
const minSame = 20

// maxParts bounds the parts of one body the comparison reads.
const maxParts = 100

// parts reads a multipart body part by part and puts what the two tools
// must agree on, each under a "part:" field: the order of the parts (by
// name, a repeated name numbered), and per part its Content-Disposition
// as sent (name, filename and their quoting), its Content-Type ("none"
// when it has none), any other header, and its content. A body that does
// not parse is compared whole (the boundary masked) with the parse error.
func parts(body, boundary string, put func(field, v string)) {
	r := multipart.NewReader(strings.NewReader(body), boundary)
	seen := map[string]int{}
	var order []string
	for len(order) < maxParts {
		// Raw: a quoted-printable part is compared as sent.
		p, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			put("part:malformed", strings.ReplaceAll(err.Error(), boundary, "{boundary}"))
			put("body:", strings.ReplaceAll(body, boundary, "{boundary}"))
			return
		}
		name := p.FormName()
		if name == "" {
			name = "(no name)"
		}
		seen[name]++
		label := name
		if seen[name] > 1 {
			label = fmt.Sprintf("%s#%d", name, seen[name])
		}
		order = append(order, label)
		content, err := io.ReadAll(io.LimitReader(p, 1<<20))
		if err != nil {
			put("part:malformed", strings.ReplaceAll(err.Error(), boundary, "{boundary}"))
			put("body:", strings.ReplaceAll(body, boundary, "{boundary}"))
			return
		}
		put("part:"+label+" Content-Disposition", p.Header.Get("Content-Disposition"))
		ct := p.Header.Get("Content-Type")
		if ct == "" {
			ct = "none"
		}
		put("part:"+label+" Content-Type", ct)
		for k, vs := range p.Header {
			if k != "Content-Disposition" && k != "Content-Type" {
				put("part:"+label+" "+k, strings.Join(vs, ", "))
			}
		}
		put("part:"+label+" content", string(content))
	}
	put("part:order", strings.Join(order, ", "))
}
