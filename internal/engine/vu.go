package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/h2"
	"github.com/plateau-perf/plateau/internal/engine/upload"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/plan/expr"
	"github.com/plateau-perf/plateau/internal/postmanurl"
)

// vu is one virtual user: its variables, HTTP client and scratch buffers. A
// vu is driven by exactly one goroutine.
type vu struct {
	id     int // global user number, 1-based
	shard  int
	thread string
	prog   *program
	w      *workload
	vars   []string
	client *httpc.Client
	// h2 sends the HTTP/2 requests, made on the first one; h2Own is the
	// user's own pool (connections: per_user).
	h2    *h2.Client
	h2Own *h2.Pool
	// transports are the user's clients for requests with their own tls
	// (index: the TLS setting; 0 unused); ws is the open websocket while
	// a websocket step runs its steps.
	transports []*userTransport
	grpc       *grpcUser // gRPC clients, made on the first call
	ws         *wsState
	rng        *mrand.Rand
	req        httpc.Request
	res        httpc.Result
	buf        []byte
	tmp        []byte // scratch for an expression's value before escaping
	pmURL      []byte // an encode: postman URL, encoded
	hdrs       []httpc.Header
	secVal     []string // scratch for secretValues
	iter       int
	// firstIntended is the intended start of the current iteration's first
	// request (open and pacing models); zero means "now".
	firstIntended time.Time
	tx            txState // the innermost running transaction
	dataOut       bool    // a non-recycling feeder ran dry
	// cursors are the user's own positions in its each_user feeders.
	cursors map[*feeder]int64
	// extractFailed: the last request's failure was an extraction without
	// a match (its on_fail default is next_iteration).
	extractFailed bool
	// typedBad says why a typed json: value ("${n:int}") was sent as null.
	typedBad string
	// doc is the last response's body decoded as JSON, decoded on first
	// use (docDone) by a condition, an extraction or a check.
	doc     any
	docDone bool
	// trace, when set, receives every request, response and branch.
	trace *tracer
	// stopCtx ends when this user must stop: think time is cut short and
	// the iteration abandoned, while a request in flight still completes.
	stopCtx context.Context
	sample  core.Sample // reused: a sample is only borrowed by the recorder
}

// txState is a transaction's running sum: its requests' total time, the
// intended start of its first request, and its first failure's class,
// status and message (what the transaction's sample takes from it; not the
// whole sample, which would make every user 150 bytes bigger).
type txState struct {
	active     bool
	hasFail    bool
	failClass  core.ErrorClass
	failStatus int
	elapsed    time.Duration
	start      int64
	failMsg    string
}

// failed records s as the transaction's failure if it is the first.
func (t *txState) failed(s *core.Sample) {
	if !t.hasFail {
		t.hasFail, t.failClass, t.failStatus, t.failMsg = true, s.Class, s.Status, s.Message
	}
}

// The vu is the expressions' environment: its variables and last response.
var _ expr.Env = (*vu)(nil)

// Var returns a variable's value (built-ins rendered on demand).
func (v *vu) Var(slot int) string { return v.value(slot) }

// Status is the last response's status.
func (v *vu) Status() int { return v.res.Status }

// Body is the last response's (bounded) body.
func (v *vu) Body() []byte { return v.res.Body }

// Header is a header of the last response.
func (v *vu) Header(name string) string { return v.res.Header(name) }

// JSON is the last response's body as JSON, decoded once per response.
func (v *vu) JSON() any {
	if !v.docDone {
		v.docDone = true
		v.doc = nil
		if json.Unmarshal(v.res.Body, &v.doc) != nil {
			v.doc = nil
		}
	}
	return v.doc
}

// Rand is the user's random source.
func (v *vu) Rand() *mrand.Rand { return v.rng }

func newVU(id int, w *workload, e *Engine) *vu {
	v := &vu{id: id, prog: w.prog, w: w, shard: id, vars: make([]string, len(w.prog.slots.names)),
		client: httpc.New(e.clientCfg), rng: mrand.New(mrand.NewPCG(uint64(id), e.seed)),
		stopCtx: context.Background()}
	v.thread = w.prog.name + " 1-" + strconv.Itoa(id)
	v.trace = e.trace
	v.vars[0] = strconv.Itoa(id)
	for name, val := range e.plan.Vars {
		v.vars[w.prog.slots.index[name]] = val
	}
	for name, val := range e.runVars {
		if slot, ok := w.prog.slots.index[name]; ok {
			v.vars[slot] = val
		}
	}
	return v
}

// h2Client returns the user's HTTP/2 client, made on first use.
func (v *vu) h2Client() *h2.Client {
	if v.h2 == nil {
		p := v.w.e.h2Pool
		if p == nil {
			v.h2Own = h2.NewPool(v.w.e.h2Cfg)
			p = v.h2Own
		}
		v.h2 = h2.NewClient(p, v.client.CookieJar())
	}
	return v.h2
}

// close closes the user's connections.
func (v *vu) close() {
	v.client.Close()
	if v.h2Own != nil {
		v.h2Own.Close()
	}
	v.closeTransports()
	v.grpc.close()
}

// runSetup runs the unmeasured setup steps. It reports false when the user
// cannot work (a setup request failed or data ran out).
func (v *vu) runSetup(ctx context.Context) error {
	if err := v.advanceFeeders(v.prog.setupFds); err != nil {
		return err
	}
	s := core.Sample{}
	return runSteps(ctx, v, v.prog.setup, false, &s)
}

// runTeardown runs the unmeasured teardown steps.
func (v *vu) runTeardown(ctx context.Context) error {
	v.stopCtx = ctx
	s := core.Sample{}
	return runSteps(ctx, v, v.prog.teardown, false, &s)
}

// iteration runs the scenario once. intended is when it should have
// started (zero: now). An iteration that on_fail ends early counts as
// skipped; stop_user and stop_run are returned to the load loop.
func (v *vu) iteration(ctx context.Context, intended time.Time) error {
	if err := v.beginIteration(intended); err != nil {
		return err
	}
	return v.endIteration(runSteps(ctx, v, v.prog.scenario, true, &v.sample))
}

// beginIteration starts an iteration: its feeders' rows, its intended
// start, a new cookie session if the plan says so. An error (the data ran
// out) means the iteration does not run.
func (v *vu) beginIteration(intended time.Time) error {
	v.iter++
	if err := v.advanceFeeders(v.prog.feeders); err != nil {
		if errors.Is(err, errStopRun) {
			v.w.e.stopRun("data ran out (on_end: stop_run, " + v.thread + ")")
		}
		return err
	}
	v.firstIntended = intended
	if v.prog.clearCookies {
		v.client.ClearCookies()
	}
	v.trace.iteration(v)
	return nil
}

// endIteration applies the outcome err of the iteration's steps: on_fail
// next_iteration is a skipped iteration (nil), stop_user and stop_run are
// skipped and returned, stop_run also stops the run.
func (v *vu) endIteration(err error) error {
	switch {
	case err == nil:
	case errors.Is(err, errNextIteration):
		v.w.skipped.Add(1)
		return nil
	case errors.Is(err, errStopUser):
		v.w.skipped.Add(1)
	case errors.Is(err, errStopRun):
		v.w.skipped.Add(1)
		v.w.e.stopRun("on_fail: stop_run (" + v.thread + ")")
	}
	return err
}

// advanceFeeders takes the next row of each feeder the steps read. A
// per_user feeder gives a user one row for all its iterations; an
// each_user feeder gives it the file's rows in order on its own cursor. At the end
// of the data it returns errDataExhausted (the workload stops), or the
// on_end outcome errStopUser or errStopRun.
func (v *vu) advanceFeeders(fs []feederUse) error {
	for _, fu := range fs {
		if fu.f.order == plan.OrderPerUser && v.iter > 1 {
			continue
		}
		var row []string
		if fu.f.order == plan.OrderEachUser {
			if v.cursors == nil {
				v.cursors = map[*feeder]int64{}
			}
			k := v.cursors[fu.f]
			v.cursors[fu.f] = k + 1
			row = fu.f.own(k)
		} else {
			row = fu.f.next(v.rng)
		}
		if row == nil {
			switch fu.f.onEnd {
			case plan.EndStopUser:
				return errStopUser
			case plan.EndStopRun:
				return errStopRun
			}
			v.dataOut = true
			return errDataExhausted
		}
		for i, slot := range fu.slots {
			if i < len(row) {
				v.vars[slot] = row[i]
			}
		}
	}
	return nil
}

// thinkTime draws a think time.
func thinkTime(t *plan.Think, v *vu) time.Duration {
	var d float64
	switch t.Dist {
	case plan.ThinkGaussian:
		d = float64(t.Mean) + float64(t.Spread)*v.rng.NormFloat64()
	case plan.ThinkExponential:
		d = float64(t.Mean) * v.rng.ExpFloat64()
	case plan.ThinkLognormal:
		// median·e^(σZ) with σ chosen so that the 95th percentile is Spread.
		sigma := math.Log(float64(t.Spread)/float64(t.Mean)) / 1.6448536269514722
		d = float64(t.Mean) * math.Exp(sigma*v.rng.NormFloat64())
	default:
		if t.Max > 0 {
			return t.Min + time.Duration(v.rng.Int64N(int64(t.Max-t.Min)+1))
		}
		return t.Fixed
	}
	return time.Duration(min(max(d, 0), float64(24*time.Hour)))
}

func (v *vu) render(t *tmpl) string {
	if t.isK {
		return t.konst
	}
	return string(v.renderBytes(t))
}

// renderBytes renders t into the user's scratch buffer, valid until the
// next render.
func (v *vu) renderBytes(t *tmpl) []byte {
	if t.isK {
		v.buf = append(v.buf[:0], t.konst...)
		return v.buf
	}
	v.buf = v.buf[:0]
	for _, p := range t.parts {
		if p.slot < 0 && p.x == nil {
			v.buf = append(v.buf, p.lit...)
			continue
		}
		if p.x != nil && p.typ == "" && !p.form && !p.json {
			// Expressions append straight into the buffer (numbers are
			// formatted there, not into a new string).
			if !p.path {
				v.buf = p.x.Append(v.buf, v)
				continue
			}
			v.tmp = p.x.Append(v.tmp[:0], v)
			v.buf = appendPathEscaped(v.buf, v.tmp)
			continue
		}
		var val string
		if p.x != nil {
			val = p.x.String(v)
		} else {
			val = v.value(p.slot)
		}
		switch {
		case p.typ != "":
			var ok bool
			if v.buf, ok = appendTyped(v.buf, val, p.typ); !ok && v.typedBad == "" {
				v.typedBad = fmt.Sprintf("json value %q is not of type %s; sent null", val, p.typ)
			}
		case p.form:
			v.buf = append(v.buf, url.QueryEscape(val)...)
		case p.path:
			v.buf = appendPathEscaped(v.buf, val)
		case p.json:
			q, _ := json.Marshal(val)
			v.buf = append(v.buf, q[1:len(q)-1]...)
		default:
			v.buf = append(v.buf, val...)
		}
	}
	return v.buf
}

// appendTyped appends a json: value sent with a type ("${n:int}"): a
// number, a boolean or raw JSON; a value that is not one is sent as null.
func appendTyped(dst []byte, val, typ string) ([]byte, bool) {
	val = strings.TrimSpace(val)
	switch typ {
	case "int", "number":
		if f, err := strconv.ParseFloat(val, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && (typ == "number" || f == math.Trunc(f)) {
			return append(dst, val...), true
		}
	case "bool":
		if b, err := strconv.ParseBool(val); err == nil {
			return strconv.AppendBool(dst, b), true
		}
	case "json":
		if json.Valid([]byte(val)) {
			return append(dst, val...), true
		}
	}
	return append(dst, "null"...), false
}

// appendPathEscaped percent-encodes a value placed in a URL path: every
// byte but unreserved characters, / and a few sub-delimiters.
func appendPathEscaped[T string | []byte](dst []byte, s T) []byte {
	const hx = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~/:@!$'()*+,;=", c) >= 0 {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', hx[c>>4], hx[c&15])
	}
	return dst
}

func (v *vu) value(slot int) string {
	switch slot {
	case 1: // __iteration, rendered only when used
		return strconv.Itoa(v.iter)
	case 2: // __uuid
		var b [16]byte
		_, _ = rand.Read(b[:])
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b[:])
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	case 3: // __timestamp_ms
		return strconv.FormatInt(time.Now().UnixMilli(), 10)
	}
	return v.vars[slot]
}

func (v *vu) request(ctx context.Context, q *request, measured bool, s *core.Sample) error {
	if measured && v.stopCtx.Err() != nil && !v.tx.active {
		return v.stopCtx.Err() // the load ended: start no new request
	}
	v.req.Method = q.method
	v.req.Verbatim = q.postman
	if q.postman && !q.url.isK {
		v.pmURL = postmanurl.AppendURL(v.pmURL[:0], v.renderBytes(&q.url))
		v.req.URL = string(v.pmURL)
	} else {
		v.req.URL = v.render(&q.url)
	}
	for i := range q.cookies {
		v.client.SetCookie(v.req.URL, q.cookies[i].name, v.render(&q.cookies[i].val))
	}
	v.hdrs = v.hdrs[:0]
	for i := range q.headers {
		v.hdrs = append(v.hdrs, httpc.Header{Name: q.headers[i].name, Value: v.render(&q.headers[i].val)})
	}
	v.req.Stream = nil
	switch {
	case q.bodyFile != "":
		v.req.Stream = upload.File{Path: q.bodyFile}
	case q.multipart != nil:
		m := &upload.Multipart{Boundary: upload.NewBoundary(), Order: q.multipart.order}
		for i := range q.multipart.fields {
			f := &q.multipart.fields[i]
			m.Fields = append(m.Fields, upload.Field{Name: f.name, Value: v.render(&f.val)})
		}
		for i := range q.multipart.files {
			f := &q.multipart.files[i]
			m.Files = append(m.Files, upload.Part{Field: f.field, Path: f.path, ContentType: f.ctype, FileName: v.render(&f.name)})
		}
		v.hdrs = append(v.hdrs, httpc.Header{Name: "Content-Type", Value: m.ContentType()})
		v.req.Stream = m
	}
	v.req.Header = v.hdrs
	v.req.Body = nil
	v.typedBad = ""
	if q.hasBody {
		v.req.Body = []byte(v.render(&q.body))
	}
	v.req.Timeout = q.timeout // 0: the client's default
	v.req.Redirects = q.redirects
	switch {
	case q.tr != 0:
		v.doOtherTLS(ctx, q) // the request's own tls: another transport
	case q.proto == protoH1 || q.proto == protoAuto && !strings.HasPrefix(v.req.URL, "https:"):
		_ = v.client.Do(ctx, &v.req, &v.res)
	default:
		_ = v.h2Client().Do(ctx, &v.req, &v.res)
	}
	v.docDone, v.extractFailed = false, false
	r := &v.res
	aborted := false
	if ctx.Err() != nil && r.Err != nil {
		if !measured || r.BytesSent == 0 {
			return ctx.Err() // stopped before the request left: the target saw nothing
		}
		// Cut off in flight (interrupt, graceful_stop): the target saw it,
		// so it is a sample, of class aborted, with the time it had run.
		aborted = true
	}
	*s = core.Sample{Label: q.label, Start: r.Start.UnixNano(), Service: r.Total, Connect: r.Connect,
		TTFB: r.TTFB, BytesSent: r.BytesSent, BytesRecv: r.BytesRecv, Status: r.Status, Class: r.Class,
		Thread: v.thread}
	s.Intended, s.Elapsed = s.Start, r.Total
	if !v.firstIntended.IsZero() {
		// First request of an open-model or paced iteration: count from the
		// intended start so queueing in the generator or server shows.
		s.Intended = v.firstIntended.UnixNano()
		s.Elapsed = r.Total + time.Duration(s.Start-s.Intended)
		v.firstIntended = time.Time{}
	}
	switch {
	case aborted:
		s.Class, s.Message = core.ErrAborted, "aborted in flight: the run stopped"
	case r.Err != nil:
		// Addresses and ports out, so that failures group (samples.jtl
		// agrees with the intervals); a status line that arrived before
		// the failure stays in s.Status.
		s.Message = metrics.NormalizeMessage(r.Err.Error())
	default:
		v.judge(q, s)
		v.extract(q.extract, s)
		if v.typedBad != "" && s.Class == core.ErrNone {
			// The body held a null the plan did not mean: not a clean sample.
			s.Class, s.Message = core.ErrCheck, v.typedBad
		}
	}
	if s.Message != "" {
		s.Message = v.redact(s.Message)
	}
	if q.redactURL {
		s.URL = q.rawURL
	} else {
		s.URL = v.req.URL
	}
	v.trace.request(v, q, s)
	return v.account(ctx, q, measured, s, aborted)
}

// account ends a request's (or gRPC call's) sample: in setup a failure
// stops the user unless the request says on_fail: continue (a JMeter setUp
// group carries on after a failed request); measured, it adds to the
// running transaction and is recorded. aborted says the exchange was cut
// off by ctx.
func (v *vu) account(ctx context.Context, q *request, measured bool, s *core.Sample, aborted bool) error {
	if !measured {
		if s.Class != core.ErrNone && (q.onFail != plan.OnFailContinue || aborted) {
			return fmt.Errorf("%w: %s: %s", errSetupFailed, q.label, s.Message)
		}
		return nil
	}
	v.note(q.label, s)
	if aborted {
		return ctx.Err()
	}
	return nil
}

// note records a measured sample and adds it to the running transaction.
func (v *vu) note(label string, s *core.Sample) {
	if v.tx.active {
		if v.tx.start == 0 {
			v.tx.start = s.Intended
		}
		v.tx.elapsed += s.Elapsed
		if s.Class != core.ErrNone {
			v.tx.failed(s)
		}
	}
	s.GroupThreads = int32(v.w.active.Load())
	s.AllThreads = int32(v.w.e.activeUsers.Load())
	v.w.e.record(v, label, false, s)
}

// judge applies the checks; without a status check, statuses ≥ 400 fail.
func (v *vu) judge(q *request, s *core.Sample) {
	body := v.res.Body
	var status []int
	for i := range q.checks {
		if len(q.checks[i].status) > 0 {
			status = q.checks[i].status
		}
	}
	switch {
	case len(status) == 0 && core.StatusFails(s.Status):
		s.Class, s.Message = core.StatusClass(s.Status), "HTTP "+strconv.Itoa(s.Status)+v.excerpt(body)
		return
	}
	// Every check is evaluated and counted (thresholds on checks); the
	// first failure is the sample's.
	phase := v.w.phase.Load()
	for i := range q.checks {
		c := &q.checks[i]
		msg := v.check(c, s)
		c.stat.count(phase, msg == "")
		if msg == "" {
			continue
		}
		if s.Class != core.ErrNone {
			continue
		}
		if c.name != "" {
			msg = c.name + ": " + msg
		}
		s.Class = core.ErrCheck
		if core.StatusFails(s.Status) {
			s.Class = core.StatusClass(s.Status)
		}
		s.Message = msg
	}
}

// check returns why the response fails c, or "".
func (v *vu) check(c *check, s *core.Sample) string {
	body := v.res.Body
	if len(c.status) > 0 && !containsInt(c.status, s.Status) {
		return fmt.Sprintf("status %d, want %s", s.Status, intsText(c.status)) + v.excerpt(body)
	}
	if c.contains != "" && !bytes.Contains(body, []byte(c.contains)) {
		return fmt.Sprintf("body does not contain %q", c.contains)
	}
	if c.notContains != "" && bytes.Contains(body, []byte(c.notContains)) {
		return fmt.Sprintf("body contains %q", c.notContains)
	}
	if c.re != nil && !c.re.Match(body) {
		return fmt.Sprintf("body does not match %q", c.re.String())
	}
	if c.notRe != nil && c.notRe.Match(body) {
		return fmt.Sprintf("body matches %q", c.notRe.String())
	}
	for _, h := range c.headerEq {
		if got := v.res.Header(h.Path); got != h.Value {
			return fmt.Sprintf("header %s is %q, want %q", h.Path, got, h.Value)
		}
	}
	for _, h := range c.headerRe {
		if got := v.res.Header(h.name); !h.re.MatchString(got) {
			return fmt.Sprintf("header %s is %q, want a match of %q", h.name, got, h.re.String())
		}
	}
	for _, h := range c.headerSet {
		if len(v.res.HeaderBytes(h)) == 0 {
			return fmt.Sprintf("header %s is missing", h)
		}
	}
	if c.minSize > 0 && v.res.BodySize < int64(c.minSize) {
		return fmt.Sprintf("body is %d bytes, want at least %d", v.res.BodySize, c.minSize)
	}
	if c.maxSize > 0 && v.res.BodySize > int64(c.maxSize) {
		return fmt.Sprintf("body is %d bytes, want at most %d", v.res.BodySize, c.maxSize)
	}
	if len(c.json) > 0 {
		doc := v.JSON()
		if doc == nil && !bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
			return "body is not JSON"
		}
		for _, jc := range c.json {
			got, ok := jc.path.First(doc)
			switch jc.op {
			case "equals":
				if !ok || expr.Text(got) != jc.want {
					return fmt.Sprintf("%s is %s, want %s", jc.raw, quoteOrMissing(got, ok), jc.want)
				}
			case "not":
				if ok && expr.Text(got) == jc.want {
					return fmt.Sprintf("%s is %s", jc.raw, jc.want)
				}
			case "match":
				if !ok || !jc.re.MatchString(expr.Text(got)) {
					return fmt.Sprintf("%s is %s, want a match of %q", jc.raw, quoteOrMissing(got, ok), jc.re.String())
				}
			case "exists":
				if !ok {
					return fmt.Sprintf("%s is missing", jc.raw)
				}
			case "absent":
				if ok {
					return fmt.Sprintf("%s is present (%s)", jc.raw, quoteOrMissing(got, ok))
				}
			}
		}
	}
	if c.maxDuration > 0 && s.Elapsed > c.maxDuration {
		return fmt.Sprintf("took %v, limit %v", s.Elapsed.Round(time.Millisecond), c.maxDuration)
	}
	return ""
}

func (v *vu) extract(xs []extractor, s *core.Sample) {
	for i := range xs {
		x := &xs[i]
		var matches []string
		one := !x.all && (x.pick == "" || x.pick == "first")
		switch {
		case x.jsonPath != nil:
			text := expr.Text
			if x.asJSON {
				text = jsonText
			}
			if one {
				if got, ok := x.jsonPath.First(v.JSON()); ok {
					matches = append(matches, text(got))
				}
			} else {
				for _, got := range x.jsonPath.All(v.JSON()) {
					matches = append(matches, text(got))
				}
			}
		case x.re != nil:
			n := 1
			if !one {
				n = -1
			}
			for _, m := range x.re.FindAllSubmatch(v.res.Body, n) {
				val := m[0]
				if len(m) > 1 {
					val = m[1]
				}
				matches = append(matches, string(val))
			}
		case x.header != "":
			if val := v.res.Header(x.header); val != "" {
				matches = append(matches, val)
			}
		case x.cookie != "":
			if val, ok := v.setCookie(x.cookie); ok {
				matches = append(matches, val)
			} else if val := v.client.Cookie(v.req.URL, x.cookie); val != "" {
				matches = append(matches, val)
			}
		case x.left != "":
			body := v.res.Body
			for {
				i := bytes.Index(body, []byte(x.left))
				if i < 0 {
					break
				}
				body = body[i+len(x.left):]
				j := bytes.Index(body, []byte(x.right))
				if j < 0 {
					break
				}
				matches = append(matches, string(body[:j]))
				body = body[j+len(x.right):]
				if one {
					break
				}
			}
		case x.css != nil:
			matches = x.css.Find(v.res.Body, !one)
		case x.xpath != nil:
			matches = x.xpath.Find(v.res.Body, v.res.Header("Content-Type"), !one)
		}
		val, ok := "", len(matches) > 0
		switch {
		case x.all:
			b, _ := json.Marshal(matches)
			val, ok = string(b), true // an empty list is a valid result
			if len(matches) == 0 && x.def != nil {
				val = *x.def
			}
		case !ok:
		case x.pick == "random":
			val = matches[v.rng.IntN(len(matches))]
		case x.pick == "last":
			val = matches[len(matches)-1]
		default:
			val = matches[0]
		}
		if !ok {
			// With a default, a missing value is not a failure (JMeter's
			// behaviour); without one, the request fails and its on_fail
			// default skips the rest of the iteration.
			if x.def != nil {
				val, ok = *x.def, true
			} else if s.Class == core.ErrNone {
				s.Class, s.Message = core.ErrCheck, "extract "+x.name+": no match"
				v.extractFailed = true
			}
		}
		v.vars[x.slot] = val
	}
}

// setCookie finds the named cookie in the response's Set-Cookie fields.
func (v *vu) setCookie(name string) (string, bool) {
	for k, val := range v.res.Headers() {
		if !bytes.EqualFold(k, []byte("Set-Cookie")) {
			continue
		}
		if ck, err := http.ParseSetCookie(string(val)); err == nil && ck.Name == name {
			return ck.Value, true
		}
	}
	return "", false
}

func quoteOrMissing(v any, ok bool) string {
	if !ok {
		return "missing"
	}
	return strconv.Quote(expr.Text(v))
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func intsText(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " or ")
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// jsonText is a JSON value as JSON text (extract as_json): a string
// quoted, everything else as expr.Text writes it.
func jsonText(v any) string {
	if s, ok := v.(string); ok {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return expr.Text(v)
}
