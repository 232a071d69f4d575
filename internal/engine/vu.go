package engine

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/plan"
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
	rng    *mrand.Rand
	req    httpc.Request
	res    httpc.Result
	buf    []byte
	hdrs   []httpc.Header
	secVal []string // scratch for secretValues
	iter   int
	// firstIntended is the intended start of the current iteration's first
	// request (open and pacing models); zero means "now".
	firstIntended time.Time
	txElapsed     time.Duration
	txStart       int64
	txFail        core.Sample // first failed request of the current transaction
	txHasFail     bool
	txActive      bool
	dataOut       bool // a non-recycling feeder ran dry
	// stopCtx ends when this user must stop: think time is cut short and
	// the iteration abandoned, while a request in flight still completes.
	stopCtx   context.Context
	lastPaced int64
	sample    core.Sample // reused: a sample is only borrowed by the recorder
}

func newVU(id int, w *workload, e *Engine) *vu {
	v := &vu{id: id, prog: w.prog, w: w, shard: id, vars: make([]string, len(w.prog.slots.names)),
		client: httpc.New(e.clientCfg), rng: mrand.New(mrand.NewPCG(uint64(id), e.seed)), lastPaced: -1,
		stopCtx: context.Background()}
	v.thread = w.prog.name + " 1-" + strconv.Itoa(id)
	v.vars[0] = strconv.Itoa(id)
	for name, val := range e.plan.Vars {
		v.vars[w.prog.slots.index[name]] = val
	}
	return v
}

// runSetup runs the unmeasured setup steps. It reports false when the user
// cannot work (a setup request failed or data ran out).
func (v *vu) runSetup(ctx context.Context) error {
	if !v.advanceFeeders(v.prog.setupFds) {
		return errDataExhausted
	}
	s := core.Sample{}
	for i := range v.prog.setup {
		if err := v.runStep(ctx, &v.prog.setup[i], false, &s); err != nil {
			return err
		}
	}
	return nil
}

// runTeardown runs the unmeasured teardown steps.
func (v *vu) runTeardown(ctx context.Context) error {
	v.stopCtx = ctx
	s := core.Sample{}
	for i := range v.prog.teardown {
		if err := v.runStep(ctx, &v.prog.teardown[i], false, &s); err != nil {
			return err
		}
	}
	return nil
}

// iteration runs the scenario once. intended is when it should have
// started (zero: now).
func (v *vu) iteration(ctx context.Context, intended time.Time) error {
	v.iter++
	if !v.advanceFeeders(v.prog.feeders) {
		return errDataExhausted
	}
	v.firstIntended = intended
	s := &v.sample
	for i := range v.prog.scenario {
		if err := v.runStep(ctx, &v.prog.scenario[i], true, s); err != nil {
			return err
		}
	}
	return nil
}

func (v *vu) advanceFeeders(fs []feederUse) bool {
	for _, fu := range fs {
		row := fu.f.next(v.rng)
		if row == nil {
			v.dataOut = true
			return false
		}
		for i, slot := range fu.slots {
			if i < len(row) {
				v.vars[slot] = row[i]
			}
		}
	}
	return true
}

func (v *vu) runStep(ctx context.Context, st *step, measured bool, s *core.Sample) error {
	switch st.kind {
	case stepRequest:
		return v.request(ctx, st.req, measured, s)
	case stepThink:
		d := st.think.Fixed
		if st.think.Max > 0 {
			d = st.think.Min + time.Duration(v.rng.Int64N(int64(st.think.Max-st.think.Min)+1))
		}
		return sleep(v.stopCtx, d)
	case stepTx:
		// A transaction's time is the sum of its requests' times (JMeter's
		// Transaction Controller without timers); it fails if one fails.
		outer := v.txActive
		v.txActive, v.txElapsed, v.txStart, v.txHasFail = true, 0, 0, false
		var err error
		for i := range st.steps {
			if err = v.runStep(ctx, &st.steps[i], measured, s); err != nil {
				break
			}
		}
		failed := &v.txFail
		if !v.txHasFail {
			failed = &core.Sample{}
		}
		if measured && err == nil && v.txStart != 0 {
			tx := core.Sample{Label: st.label, Intended: v.txStart, Start: v.txStart, Elapsed: v.txElapsed,
				Service: v.txElapsed, Thread: v.thread, Transaction: true, Class: failed.Class,
				Status: failed.Status, Message: failed.Message,
				GroupThreads: int32(v.w.active.Load()), AllThreads: int32(v.w.e.activeUsers.Load())}
			v.w.e.record(v, st.label, true, &tx)
		}
		v.txActive = outer
		return err
	case stepLoop:
		for n := 0; n < st.count; n++ {
			for i := range st.steps {
				if err := v.runStep(ctx, &st.steps[i], measured, s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (v *vu) render(t *tmpl) string {
	if t.isK {
		return t.konst
	}
	v.buf = v.buf[:0]
	for _, p := range t.parts {
		if p.slot < 0 {
			v.buf = append(v.buf, p.lit...)
			continue
		}
		val := v.value(p.slot)
		if p.form {
			v.buf = append(v.buf, url.QueryEscape(val)...)
		} else if p.json {
			q, _ := json.Marshal(val)
			v.buf = append(v.buf, q[1:len(q)-1]...)
		} else {
			v.buf = append(v.buf, val...)
		}
	}
	return string(v.buf)
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
	if measured && v.stopCtx.Err() != nil && !v.txActive {
		return v.stopCtx.Err() // the load ended: start no new request
	}
	v.req.Method = q.method
	v.req.URL = v.render(&q.url)
	v.hdrs = v.hdrs[:0]
	for i := range q.headers {
		v.hdrs = append(v.hdrs, httpc.Header{Name: q.headers[i].name, Value: v.render(&q.headers[i].val)})
	}
	v.req.Header = v.hdrs
	v.req.Body = nil
	if q.hasBody {
		v.req.Body = []byte(v.render(&q.body))
	}
	v.req.Timeout = q.timeout // 0: the client's default
	_ = v.client.Do(ctx, &v.req, &v.res)
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
		s.Message = r.Err.Error()
	default:
		v.judge(q, s)
		v.extract(q, s)
	}
	if s.Message != "" {
		s.Message = v.redact(s.Message)
	}
	if q.redactURL {
		s.URL = q.rawURL
	} else {
		s.URL = v.req.URL
	}
	if !measured {
		if s.Class != core.ErrNone {
			return fmt.Errorf("%w: %s: %s", errSetupFailed, q.label, s.Message)
		}
		return nil
	}
	if v.txActive {
		if v.txStart == 0 {
			v.txStart = s.Intended
		}
		v.txElapsed += s.Elapsed
		if s.Class != core.ErrNone && !v.txHasFail {
			v.txFail, v.txHasFail = *s, true
		}
	}
	s.GroupThreads = int32(v.w.active.Load())
	s.AllThreads = int32(v.w.e.activeUsers.Load())
	v.w.e.record(v, q.label, false, s)
	if aborted {
		return ctx.Err()
	}
	return nil
}

// judge applies the checks; the default check fails statuses ≥ 400.
func (v *vu) judge(q *request, s *core.Sample) {
	c := &q.check
	body := v.res.Body
	switch {
	case len(c.status) == 0 && core.StatusFails(s.Status):
		s.Class, s.Message = core.StatusClass(s.Status), "HTTP "+strconv.Itoa(s.Status)+v.excerpt(body)
		return
	case len(c.status) > 0 && !containsInt(c.status, s.Status):
		s.Class = core.StatusClass(s.Status)
		s.Message = fmt.Sprintf("status %d, want %s", s.Status, intsText(c.status)) + v.excerpt(body)
		return
	}
	if c.contains != "" && !bytes.Contains(body, []byte(c.contains)) {
		s.Class, s.Message = core.ErrCheck, fmt.Sprintf("body does not contain %q", c.contains)
		return
	}
	if c.notContains != "" && bytes.Contains(body, []byte(c.notContains)) {
		s.Class, s.Message = core.ErrCheck, fmt.Sprintf("body contains %q", c.notContains)
		return
	}
	if len(c.json) > 0 {
		var doc any
		if err := json.Unmarshal(body, &doc); err != nil {
			s.Class, s.Message = core.ErrCheck, "body is not JSON"
			return
		}
		for _, jc := range c.json {
			got, ok := lookup(doc, jc.path)
			if !ok || jsonText(got) != jc.want {
				s.Class, s.Message = core.ErrCheck, fmt.Sprintf("%s is %s, want %s", jc.raw, quoteOrMissing(got, ok), jc.want)
				return
			}
		}
	}
	if c.maxDuration > 0 && s.Elapsed > c.maxDuration {
		s.Class, s.Message = core.ErrCheck, fmt.Sprintf("took %v, limit %v", s.Elapsed.Round(time.Millisecond), c.maxDuration)
	}
}

func (v *vu) extract(q *request, s *core.Sample) {
	if len(q.extract) == 0 {
		return
	}
	var doc any
	parsed := false
	for _, x := range q.extract {
		val, ok := "", false
		switch {
		case x.jsonPath != nil:
			if !parsed {
				parsed = true
				if json.Unmarshal(v.res.Body, &doc) != nil {
					doc = nil
				}
			}
			var got any
			if got, ok = lookup(doc, x.jsonPath); ok {
				val = jsonText(got)
			}
		case x.re != nil:
			if m := x.re.FindSubmatch(v.res.Body); m != nil {
				ok = true
				val = string(m[0])
				if len(m) > 1 {
					val = string(m[1])
				}
			}
		case x.header != "":
			val = v.res.Header(x.header)
			ok = val != ""
		}
		if !ok {
			if x.def != nil {
				val, ok = *x.def, true
			} else if s.Class == core.ErrNone {
				s.Class, s.Message = core.ErrCheck, "extract "+x.name+": no match"
			}
		}
		v.vars[x.slot] = val
	}
}

func lookup(doc any, path []plan.PathElem) (any, bool) {
	cur := doc
	for _, p := range path {
		if p.IsIndex {
			arr, ok := cur.([]any)
			if !ok || p.Index >= len(arr) {
				return nil, false
			}
			cur = arr[p.Index]
			continue
		}
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = obj[p.Key]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func jsonText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

func quoteOrMissing(v any, ok bool) string {
	if !ok {
		return "missing"
	}
	return strconv.Quote(jsonText(v))
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
