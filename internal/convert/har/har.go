// Package har converts a browser recording (HAR 1.2) into a plateau plan:
// one request per entry (static assets left out unless asked for), think
// times from the gaps between entries, automatic correlation of values a
// response returned and a later request sent back, and secret headers read
// from the environment instead of written into the plan.
package har

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/secret"
)

// HAR is the part of a HAR file the converter reads.
type HAR struct {
	Log struct {
		Creator struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"creator"`
		Pages   []Page  `json:"pages"`
		Entries []Entry `json:"entries"`
	} `json:"log"`
}

// Page is one page of the recording.
type Page struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Entry is one recorded exchange.
type Entry struct {
	Pageref         string   `json:"pageref"`
	StartedDateTime string   `json:"startedDateTime"`
	Time            float64  `json:"time"` // ms
	Request         Request  `json:"request"`
	Response        Response `json:"response"`
}

// Request is a recorded request.
type Request struct {
	Method      string    `json:"method"`
	URL         string    `json:"url"`
	HTTPVersion string    `json:"httpVersion"`
	Headers     []NameVal `json:"headers"`
	QueryString []NameVal `json:"queryString"`
	PostData    *PostData `json:"postData"`
	Cookies     []NameVal `json:"cookies"`
}

// PostData is a recorded request body.
type PostData struct {
	MimeType string    `json:"mimeType"`
	Text     string    `json:"text"`
	Params   []NameVal `json:"params"`
}

// Response is a recorded response.
type Response struct {
	Status  int       `json:"status"`
	Headers []NameVal `json:"headers"`
	Content struct {
		MimeType string `json:"mimeType"`
		Text     string `json:"text"`
		Encoding string `json:"encoding"`
	} `json:"content"`
	RedirectURL string `json:"redirectURL"`
}

// NameVal is a HAR name/value pair.
type NameVal struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// maxHAR bounds the size of a recording read into memory.
const maxHAR = 512 << 20

// Parse reads a HAR file.
func Parse(r io.Reader) (*HAR, error) {
	var h HAR
	if err := convert.ReadJSON(r, "HAR", maxHAR, &h); err != nil {
		return nil, err
	}
	if h.Log.Entries == nil {
		return nil, errors.New("not a HAR file: no log.entries")
	}
	return &h, nil
}

// Options change a conversion.
type Options struct {
	Source     string
	KeepAssets bool
	// MinThink is the smallest gap between entries kept as a think time
	// (default 200ms): shorter gaps are the browser's own work.
	MinThink time.Duration
	// MaxThink caps a gap between entries (default 1m): a longer one is a
	// paused recording or sessions recorded apart, not a user's think
	// time; the report says how many were capped.
	MaxThink time.Duration
	// CorrelationBudget bounds the response bodies kept to look values up
	// in (default 64 MiB); older bodies are forgotten, and the report says
	// how many.
	CorrelationBudget int
	// Hosts keeps only the entries whose host matches one of these
	// patterns (path.Match: "api.example.com", "*.example.com"; a pattern
	// with a port matches host:port). Empty keeps every host. The others
	// still count as the browser's work between kept requests, as assets
	// do.
	Hosts []string
	// From and To keep only the entries that started in [From, To): a
	// recording often holds more than the journey (a login done twice, a
	// session recorded days apart). Entries outside the window are left
	// out entirely, their time included.
	From, To Bound
}

// Bound is one end of a time window: an instant, or an offset from the
// recording's first entry. The zero Bound leaves that end open.
type Bound struct {
	At       time.Time
	Offset   time.Duration
	IsOffset bool
}

// ParseBound reads a window end: an RFC 3339 time
// ("2024-03-01T10:15:00Z") or a duration from the recording's first entry
// ("90s", "2m30s"). "" is an open end.
func ParseBound(v string) (Bound, error) {
	if v == "" {
		return Bound{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return Bound{}, fmt.Errorf("time %q: an offset from the first entry cannot be negative", v)
		}
		return Bound{Offset: d, IsOffset: true}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return Bound{}, fmt.Errorf("time %q: neither an RFC 3339 time (2024-03-01T10:15:00Z) nor an offset from the first entry (90s)", v)
	}
	return Bound{At: t}, nil
}

func (b Bound) open() bool { return !b.IsOffset && b.At.IsZero() }

// resolve is the bound's instant for a recording whose first entry started
// at first.
func (b Bound) resolve(first time.Time) time.Time {
	if b.IsOffset {
		return first.Add(b.Offset)
	}
	return b.At
}

// hostMatches reports whether u's host matches one of the patterns.
func hostMatches(patterns []string, u *url.URL) bool {
	for _, p := range patterns {
		p = strings.ToLower(p)
		target := strings.ToLower(u.Hostname())
		if strings.Contains(p, ":") {
			target = strings.ToLower(u.Host)
		}
		if ok, err := path.Match(p, target); err == nil && ok {
			return true
		}
	}
	return false
}

// Convert builds the plan and its report from a HAR held in memory.
func Convert(h *HAR, opt Options) (*convert.Plan, *convert.Report) {
	metas := make([]meta, len(h.Log.Entries))
	for i := range h.Log.Entries {
		metas[i] = metaOf(&h.Log.Entries[i])
	}
	p, rep, _ := convertFrom(metas, h.Log.Pages, func(i int) (*Entry, error) { return &h.Log.Entries[i], nil }, opt)
	return p, rep
}

// meta is what the converter needs of an entry before it converts it:
// the order, the target, the page groups and the think times. A streamed
// conversion keeps only this per entry (and the entry's place in the file),
// never the entries themselves.
type meta struct {
	start         time.Time
	ms            float64 // the entry's time
	method, url   string
	pageref       string
	asset         bool // static asset by extension or content type
	from, to      int64
	parseURLError bool
}

func metaOf(e *Entry) meta {
	m := meta{ms: e.Time, method: e.Request.Method, url: resolveURL(e), pageref: e.Pageref}
	m.start, _ = time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if u, err := url.Parse(e.Request.URL); err == nil {
		m.asset = isAsset(e, u)
	}
	return m
}

// convertFrom converts the entries described by metas, loading each kept
// one with load when its turn comes.
func convertFrom(metas []meta, pages []Page, load func(int) (*Entry, error), opt Options) (*convert.Plan, *convert.Report, error) {
	if opt.MinThink == 0 {
		opt.MinThink = 200 * time.Millisecond
	}
	if opt.MaxThink == 0 {
		opt.MaxThink = time.Minute
	}
	rep := &convert.Report{Source: opt.Source, Kind: "HAR"}
	name := strings.TrimSuffix(path.Base(strings.ReplaceAll(opt.Source, "\\", "/")), path.Ext(opt.Source))
	if name == "" || name == "." {
		name = "recording"
	}
	p := &convert.Plan{Name: name, Header: []string{"Converted from " + path.Base(opt.Source) + " by plateau convert har."}}
	zero := 0
	// Each recorded redirect is its own entry: send them as recorded.
	p.HTTP.Redirects = &zero

	// Order by start time (HAR writers do not all keep order).
	idx := make([]int, len(metas))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return metas[idx[a]].start.Before(metas[idx[b]].start) })

	// The time window, resolved against the first entry that has a time.
	var firstStart time.Time
	for _, i := range idx {
		if !metas[i].start.IsZero() {
			firstStart = metas[i].start
			break
		}
	}
	from, to := opt.From.resolve(firstStart), opt.To.resolve(firstStart)
	outside := make([]bool, len(metas))
	nOutside, nHost := 0, 0

	// Target: the most used origin among kept entries.
	var kept []int
	for _, i := range idx {
		m := &metas[i]
		u, err := url.Parse(m.url)
		path := fmt.Sprintf("entry %d: %s %s", i+1, m.method, m.url)
		switch {
		case (!opt.From.open() && m.start.Before(from)) || (!opt.To.open() && !m.start.Before(to)):
			outside[i] = true
			nOutside++
			rep.Add(convert.Item{Path: path, Type: "entry", Status: convert.NotNeeded, Note: "outside the --from/--to window"})
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			rep.Add(convert.Item{Path: path, Type: "entry", Status: convert.NotConverted, Note: "not an http(s) URL"})
		case len(opt.Hosts) > 0 && !hostMatches(opt.Hosts, u):
			nHost++
			rep.Add(convert.Item{Path: path, Type: "entry", Status: convert.NotNeeded, Note: "host not among --host " + strings.Join(opt.Hosts, ", ")})
		case !opt.KeepAssets && m.asset:
			rep.Add(convert.Item{Path: path, Type: "entry", Status: convert.NotNeeded, Note: "static asset (kept with --keep-assets)"})
		default:
			kept = append(kept, i)
		}
	}
	if nOutside > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d entries started outside the window %s and are left out, with their time.",
			nOutside, len(metas), windowText(from, to, opt)))
	}
	if nHost > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d entries to hosts other than %s are not sent; their time counts as the browser's work between the requests kept.",
			nHost, strings.Join(opt.Hosts, ", ")))
	}
	origins := map[string]int{}
	best := ""
	for _, i := range kept {
		u, _ := url.Parse(metas[i].url)
		o := u.Scheme + "://" + u.Host
		origins[o]++
		if best == "" || origins[o] > origins[best] {
			best = o
		}
	}
	if best == "" {
		best = "http://localhost"
		rep.Notes = append(rep.Notes, "No request was kept; the plan holds a placeholder.")
	}
	p.Target = best

	if opt.CorrelationBudget <= 0 {
		opt.CorrelationBudget = corrBudget
	}
	c := &correlator{plan: p, report: rep, secrets: map[string]string{}, budget: opt.CorrelationBudget}
	wl := &convert.Workload{Name: "recording", Load: convert.Load{Users: "1", Iterations: "1"}}
	var curPage string
	var group *convert.Group
	flush := func() {
		if group != nil && len(group.Steps) > 0 {
			wl.Scenario = append(wl.Scenario, convert.Step{Transaction: group})
		}
		group = nil
	}
	pageTitle := map[string]string{}
	for _, pg := range pages {
		pageTitle[pg.ID] = pg.Title
	}
	isKept := make([]bool, len(metas))
	for _, i := range kept {
		isKept[i] = true
	}
	// Think times count from the end of everything the browser did before,
	// assets included.
	var prevEnd time.Time
	first := true
	relative, capped := 0, 0
	var longest time.Duration
	for _, i := range idx {
		m := &metas[i]
		st := m.start
		end := st.Add(time.Duration(m.ms * float64(time.Millisecond)))
		if outside[i] {
			continue
		}
		if !isKept[i] {
			if end.After(prevEnd) {
				prevEnd = end
			}
			continue
		}
		e, err := load(i)
		if err != nil {
			return nil, nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		if e.Request.URL != m.url {
			// A relative URL resolved against the entry's Host header.
			e.Request.URL = m.url
			relative++
		}
		grouped := e.Pageref != "" && len(pages) > 1
		if grouped && (e.Pageref != curPage || group == nil) {
			flush()
		}
		if !first && !st.IsZero() && !prevEnd.IsZero() {
			if gap := st.Sub(prevEnd); gap >= opt.MinThink {
				if gap > opt.MaxThink {
					capped++
					longest = max(longest, gap)
					gap = opt.MaxThink
				}
				think := convert.Step{Think: &convert.Think{Fixed: gap.Round(10 * time.Millisecond)}}
				if group != nil {
					group.Steps = append(group.Steps, think)
				} else {
					wl.Scenario = append(wl.Scenario, think)
				}
			}
		}
		first = false
		if end.After(prevEnd) {
			prevEnd = end
		}
		req, note := c.request(i, e, best)
		status := convert.Converted
		if note != "" {
			status = convert.Partial
		}
		rep.Add(convert.Item{Path: fmt.Sprintf("entry %d: %s %s", i+1, e.Request.Method, e.Request.URL), Name: req.Name, Type: "entry", Status: status, Note: note})
		step := convert.Step{Request: req}
		if grouped {
			if group == nil {
				curPage = e.Pageref
				title := pageTitle[e.Pageref]
				if title == "" {
					title = e.Pageref
				}
				group = &convert.Group{Name: plainName(title)}
			}
			group.Steps = append(group.Steps, step)
			continue
		}
		wl.Scenario = append(wl.Scenario, step)
	}
	flush()
	c.finish()
	if len(wl.Scenario) == 0 {
		wl.Scenario = []convert.Step{convert.CommentStep("the recording holds no request to convert")}
	}
	p.Workloads = []*convert.Workload{wl}
	rep.Notes = append(rep.Notes, "The load is one user running the recording once; set load (users, duration, rate) for a test.",
		"Redirects are sent as recorded (http.redirects: 0): each redirect is its own entry in a HAR.")
	if capped > 0 {
		rep.AddBehaviour(fmt.Sprintf("%d %s between entries longer than %s (the longest %s: the recording paused, or joins sessions recorded apart) %s shortened to %s", capped, map[bool]string{true: "pause", false: "pauses"}[capped == 1], convert.Dur(opt.MaxThink), longest.Round(time.Second), map[bool]string{true: "is", false: "are"}[capped == 1], convert.Dur(opt.MaxThink)))
	}
	if len(c.browserDropped) > 0 {
		names := make([]string, 0, len(c.browserDropped))
		total := 0
		for k, n := range c.browserDropped {
			names = append(names, k)
			total += n
		}
		sort.Strings(names)
		rep.AddBehaviour(fmt.Sprintf("the browser's own request headers are not sent (%d in all: %s): they describe the browser, its cache and the page's navigation, not the test", total, strings.Join(names, ", ")))
	}
	if c.fromCache > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d %s sent by later requests appeared only in bodies the browser took from its cache (304 answers): not correlated, sent as recorded.", c.fromCache, map[bool]string{true: "value", false: "values"}[c.fromCache == 1]))
	}
	if c.notModified > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d recorded 304 (Not Modified) answers are checked as 200 or 304: the conditional headers that asked for them (If-None-Match, If-Modified-Since) belong to the browser's cache and are not sent.", c.notModified))
	}
	if relative > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d entries recorded a path without scheme and host (a server-side capture); they are sent to their Host header over http (the recording does not say https).", relative))
	}
	if c.forgotten > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("Correlation searched the latest %.0f MiB of response bodies: %d older responses were no longer searched for values later requests sent.", float64(opt.CorrelationBudget)/(1<<20), c.forgotten))
	}
	// Passwords typed into forms, API keys in query strings, secret JSON
	// members: the one secret rule, over the whole plan and the report.
	held := make([]string, 0, len(c.secrets))
	for v := range c.secrets {
		held = append(held, v)
	}
	convert.HideSecrets(p, rep, "HAR_", held...)
	return p, rep, nil
}

func plainName(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "${", "{"))
	if s == "" {
		return "page"
	}
	return s
}

var assetExt = map[string]bool{
	".js": true, ".mjs": true, ".css": true, ".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".svg": true,
	".ico": true, ".webp": true, ".avif": true, ".bmp": true, ".woff": true, ".woff2": true, ".ttf": true, ".otf": true,
	".eot": true, ".map": true, ".mp4": true, ".webm": true, ".mp3": true, ".wav": true,
}

// isAsset reports whether an entry is a static asset a browser fetches on
// its own: by file extension or by the response's content type.
func isAsset(e *Entry, u *url.URL) bool {
	if assetExt[strings.ToLower(path.Ext(u.Path))] {
		return true
	}
	mt := strings.ToLower(e.Response.Content.MimeType)
	for _, p := range []string{"image/", "font/", "text/css", "application/javascript", "text/javascript", "application/x-javascript", "video/", "audio/", "application/font"} {
		if strings.HasPrefix(mt, p) {
			return true
		}
	}
	return false
}

// dropHeaders are request headers the HTTP client sets itself, or that
// belong to the browser rather than the test.
// browserHeaders are those of dropHeaders that the browser sets on its
// own (the report names the ones left out).
var browserHeaders = map[string]bool{
	"upgrade-insecure-requests": true, "priority": true, "if-none-match": true, "if-modified-since": true,
	"cache-control": true, "pragma": true,
}

var dropHeaders = map[string]bool{
	"host": true, "content-length": true, "connection": true, "accept-encoding": true, "keep-alive": true,
	"transfer-encoding": true, "upgrade": true, "te": true, "proxy-connection": true, "upgrade-insecure-requests": true,
	"sec-fetch-site": true, "sec-fetch-mode": true, "sec-fetch-dest": true, "sec-fetch-user": true,
	"sec-ch-ua": true, "sec-ch-ua-mobile": true, "sec-ch-ua-platform": true, "priority": true,
	"if-none-match": true, "if-modified-since": true, "cache-control": true, "pragma": true,
}

// isSecretHeader is the secret rule (secret.IsName): Authorization,
// Cookie, X-Api-Key, X-CSRF-Token, … are read from the environment.
func isSecretHeader(name string) bool { return secret.IsName(name) }

// itoa is strconv.Itoa (kept short at call sites).
func itoa(n int) string { return strconv.Itoa(n) }

// resolveURL is the entry's URL; a recorder that writes the path only
// (server-side capture: "/api/users" with a Host header) gets
// http://HOST/path — the scheme is not recorded, http is assumed.
func resolveURL(e *Entry) string {
	u := e.Request.URL
	if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
		return u
	}
	for _, h := range e.Request.Headers {
		if strings.EqualFold(h.Name, "Host") || h.Name == ":authority" {
			if host := strings.TrimSpace(h.Value); host != "" && !strings.ContainsAny(host, "/?#@ ") {
				return "http://" + host + u
			}
		}
	}
	return u
}

// windowText names the window in the report: [from, to) in UTC, an open
// end as "…".
func windowText(from, to time.Time, opt Options) string {
	f, t := "…", "…"
	if !opt.From.open() {
		f = from.UTC().Format(time.RFC3339)
	}
	if !opt.To.open() {
		t = to.UTC().Format(time.RFC3339)
	}
	return "[" + f + ", " + t + ")"
}
