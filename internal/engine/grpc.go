package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	grpcproto "github.com/plateau-perf/plateau/internal/engine/proto/grpc"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
)

// grpcStep is one gRPC call (package proto/grpc). Its checks and
// extractions are the HTTP request's, applied to the response message's
// JSON form; req holds them with the label and on_fail.
type grpcStep struct {
	req request
	// firstLabel and msgLabel are a server stream's derived labels.
	firstLabel, msgLabel string
	target               string // host:port
	useTLS               bool
	tr                   int // TLS setting (tlsSettings): 0 for http.tls
	method               string
	fixed                *grpcproto.Method // from the plan's .proto files; nil: reflection
	message              tmpl
	metadata             []hdrTmpl
	timeout              time.Duration
	// codes, minMsgs and maxMsgs are the gRPC parts of req.checks, by
	// index: accepted status codes (none: OK only) and message bounds.
	codes   [][]uint32
	minMsgs []int
	maxMsgs []int
	// anyCode is the union of every check's codes: a response with one of
	// them is judged by the checks instead of failing on its code.
	anyCode []uint32
}

func (c *compiler) grpc(g *plan.GRPC) *grpcStep {
	st := &grpcStep{method: g.Method, timeout: g.Timeout}
	st.req = request{label: g.Name, onFail: g.OnFail}
	st.firstLabel, st.msgLabel = plan.GRPCStreamLabels(g.Name)
	if st.req.onFail == "" {
		st.req.onFail = c.onFail
	}
	c.labels = append(c.labels, g.Name)
	target := g.Target
	if target == "" {
		target = c.p.Target // checked http(s):// URL: its host, its TLS
	}
	var err error
	if st.target, st.useTLS, err = plan.ParseGRPCTarget(target); err != nil {
		c.errs = append(c.errs, g.Name+": "+err.Error())
	}
	st.tr = c.tls.index(g.TLS)
	if g.Desc != nil {
		if st.fixed, err = grpcproto.NewMethod(g.Desc); err != nil {
			c.errs = append(c.errs, g.Name+": "+err.Error())
		}
	}
	st.message = tmpl{isK: true, konst: "{}"}
	if g.Message != nil {
		st.message = c.tmpl(g.Message)
	}
	for _, m := range g.Metadata {
		st.metadata = append(st.metadata, hdrTmpl{name: m.Name, val: c.tmpl(&m.Value)})
	}
	// The request compiler builds the extractors and checks.
	r := c.request(&plan.Request{Name: g.Name, Method: "GRPC", Extract: g.Extract, Checks: g.Checks})
	c.labels = c.labels[:len(c.labels)-1] // request() added the label again
	if g.Desc == nil || g.Desc.IsStreamingServer() {
		c.labels = append(c.labels, st.firstLabel, st.msgLabel) // a stream's (reflection: maybe)
	}
	st.req.extract, st.req.checks = r.extract, r.checks
	for _, pc := range g.Checks {
		var cs []uint32
		for _, s := range pc.Code {
			code, _ := core.ParseGRPCCode(s) // checked at load
			cs = append(cs, code)
			st.anyCode = append(st.anyCode, code)
		}
		st.codes = append(st.codes, cs)
		st.minMsgs = append(st.minMsgs, pc.MinMessages)
		st.maxMsgs = append(st.maxMsgs, pc.MaxMessages)
	}
	return st
}

// grpcConns are the run's gRPC connections: one per target and TLS
// setting, shared by all users with http.connections: shared; otherwise
// each user dials its own (grpcUser).
type grpcConns struct {
	cfg      grpcproto.Config // without TLS
	insecure bool             // http.insecure
	shared   bool
	mu       sync.Mutex
	conns    map[string]*grpcproto.Conn
}

func newGRPCConns(h plan.HTTP, c httpc.Config) *grpcConns {
	return &grpcConns{shared: h.Connections == plan.ConnShared, conns: map[string]*grpcproto.Conn{}, insecure: c.InsecureSkipVerify,
		cfg: grpcproto.Config{ConnectTimeout: c.ConnectTimeout, Timeout: c.Timeout, MaxBody: c.MaxBody, UserAgent: c.UserAgent}}
}

// grpcTLS is TLS setting tr's configuration for a gRPC connection:
// http.tls (tr 0) or a step's tls: over it, with http.insecure.
func (e *Engine) grpcTLS(tr int) (*tls.Config, error) {
	tc := e.clientCfg.TLSConfig
	if tr > 0 {
		t := e.trs.get(e, tr)
		if t.err != nil {
			return nil, t.err
		}
		tc = t.client.TLSConfig
	}
	if tc == nil {
		tc = &tls.Config{}
	}
	tc = tc.Clone()
	tc.InsecureSkipVerify = e.grpc.insecure
	return tc, nil
}

// dial makes a connection: cleartext when tc is nil.
func (g *grpcConns) dial(target string, tc *tls.Config) (*grpcproto.Conn, error) {
	cfg := g.cfg
	cfg.TLS = tc
	return grpcproto.Dial(target, cfg)
}

// conn returns the shared connection to a target, dialled on first use.
func (g *grpcConns) conn(key, target string, tc *tls.Config) (*grpcproto.Conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.conns[key]; c != nil {
		return c, nil
	}
	c, err := g.dial(target, tc)
	if err == nil {
		g.conns[key] = c
	}
	return c, err
}

func (g *grpcConns) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		_ = c.Close()
	}
}

// grpcUser is one user's gRPC clients, by target.
type grpcUser struct {
	clients map[string]*grpcproto.Client
	own     []*grpcproto.Conn
	md      []string
}

func (u *grpcUser) close() {
	if u == nil {
		return
	}
	for _, c := range u.own {
		_ = c.Close()
	}
}

// grpcClient returns the user's client for the step's target.
func (v *vu) grpcClient(g *grpcStep) (*grpcproto.Client, error) {
	if v.grpc == nil {
		v.grpc = &grpcUser{clients: map[string]*grpcproto.Client{}}
	}
	key := g.target
	if g.useTLS {
		key = "tls" + strconv.Itoa(g.tr) + ":" + key
	}
	if cl := v.grpc.clients[key]; cl != nil {
		return cl, nil
	}
	var tc *tls.Config
	if g.useTLS {
		var err error
		if tc, err = v.w.e.grpcTLS(g.tr); err != nil {
			return nil, err
		}
	}
	conns := v.w.e.grpc
	var conn *grpcproto.Conn
	var err error
	if conns.shared {
		conn, err = conns.conn(key, g.target, tc)
	} else if conn, err = conns.dial(g.target, tc); err == nil {
		v.grpc.own = append(v.grpc.own, conn)
	}
	if err != nil {
		return nil, err
	}
	cl := grpcproto.NewClient(conn)
	v.grpc.clients[key] = cl
	return cl, nil
}

func (g *grpcStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	if measured && v.stopCtx.Err() != nil && !v.tx.active {
		return v.stopCtx.Err() // the load ended: start no new call
	}
	cl, err := v.grpcClient(g)
	v.typedBad = ""
	msg := v.render(&g.message)
	md := v.grpcMetadata(g)
	// The trace shows a call as a request.
	v.req.Method, v.req.URL, v.req.Header, v.req.Body = "gRPC", g.url(), v.hdrs, []byte(msg)
	var out grpcproto.Outcome
	m := g.fixed
	if err == nil && m == nil {
		m, err = cl.Conn().Reflect(ctx, g.method)
	}
	if err != nil {
		// No connection or no method: a failed call, classed by the
		// status the server gave (UNIMPLEMENTED: no reflection service).
		out.NotSent = true
		v.res = httpc.Result{Start: time.Now(), Err: err, Class: core.ErrOther}
		var se interface{ GRPCStatus() *status.Status }
		if errors.As(err, &se) && se.GRPCStatus().Code() != codes.OK {
			v.res.Class = core.GRPCClass(uint32(se.GRPCStatus().Code()))
		}
	} else {
		out = cl.Do(ctx, &grpcproto.Call{Method: m, Message: v.req.Body, Metadata: md, Timeout: g.timeout}, &v.res)
	}
	v.docDone, v.extractFailed = false, false
	r := &v.res
	aborted := false
	if ctx.Err() != nil && r.Err != nil {
		if !measured || r.BytesSent == 0 {
			return ctx.Err()
		}
		aborted = true
	}
	q := &g.req
	*s = core.Sample{Label: q.label, Start: r.Start.UnixNano(), Service: r.Total, TTFB: r.TTFB,
		BytesSent: r.BytesSent, BytesRecv: r.BytesRecv, Class: r.Class, Thread: v.thread}
	s.Intended, s.Elapsed = s.Start, r.Total
	if !v.firstIntended.IsZero() {
		s.Intended = v.firstIntended.UnixNano()
		s.Elapsed = r.Total + time.Duration(s.Start-s.Intended)
		v.firstIntended = time.Time{}
	}
	switch {
	case aborted:
		s.Class, s.Message = core.ErrAborted, "aborted in flight: the run stopped"
	case out.NotSent || r.Err != nil && !g.accepts(uint32(out.Code)):
		s.Message = metrics.NormalizeMessage(r.Err.Error())
	default:
		s.Class = core.ErrNone
		v.judgeGRPC(g, s, out)
		v.extract(q.extract, s)
		if v.typedBad != "" && s.Class == core.ErrNone {
			s.Class, s.Message = core.ErrCheck, v.typedBad
		}
	}
	if s.Message != "" {
		s.Message = v.redact(s.Message)
	}
	s.URL = g.url()
	v.trace.request(v, q, s)
	if err := v.account(ctx, q, measured, s, aborted); err != nil {
		return err
	}
	if measured && len(out.Arrivals) > 0 {
		g.recordStream(v, s, out.Arrivals)
	}
	return q.onFailOutcome(v, measured, s)
}

// recordStream records a server stream's derived labels: "<label> first
// message", the time to the first message (from the intended start, as
// the call's own time), and "<label> message", one sample per message
// with the time since the previous one (the first: since the call
// started), so its count is the messages received and its throughput the
// messages per second.
func (g *grpcStep) recordStream(v *vu, call *core.Sample, arrivals []time.Duration) {
	queued := call.Elapsed - call.Service // time from the intended start to the send
	d := core.Sample{Label: g.firstLabel, Intended: call.Intended, Start: call.Start, Elapsed: queued + arrivals[0],
		Service: arrivals[0], TTFB: arrivals[0], Thread: call.Thread, GroupThreads: call.GroupThreads, AllThreads: call.AllThreads}
	v.w.e.recordDerived(v, g.firstLabel, &d)
	prev := time.Duration(0)
	for _, at := range arrivals {
		d.Label, d.Start = g.msgLabel, call.Start+int64(prev)
		d.Intended, d.Elapsed, d.Service, d.TTFB = d.Start, at-prev, at-prev, at-prev
		v.w.e.recordDerived(v, g.msgLabel, &d)
		prev = at
	}
}

// url names the call in samples and traces: grpc(s)://host:port/Service/Method.
func (g *grpcStep) url() string {
	scheme := "grpc://"
	if g.useTLS {
		scheme = "grpcs://"
	}
	return scheme + g.target + "/" + g.method
}

// accepts reports whether a check lists code, so that a response with it
// is judged by the checks rather than failed by its code.
func (g *grpcStep) accepts(code uint32) bool {
	for _, c := range g.anyCode {
		if c == code {
			return true
		}
	}
	return false
}

// grpcMetadata renders the step's metadata as key, value pairs.
func (v *vu) grpcMetadata(g *grpcStep) []string {
	v.hdrs = v.hdrs[:0]
	if len(g.metadata) == 0 {
		return nil
	}
	md := v.grpc.mdScratch()
	for i := range g.metadata {
		val := v.render(&g.metadata[i].val)
		v.hdrs = append(v.hdrs, httpc.Header{Name: g.metadata[i].name, Value: val})
		md = append(md, g.metadata[i].name, val)
	}
	v.grpc.md = md
	return md
}

func (u *grpcUser) mdScratch() []string {
	if u == nil {
		return nil
	}
	return u.md[:0]
}

// judgeGRPC applies the checks to a response: its code first (OK unless
// a check lists others), then each check's conditions on the message.
func (v *vu) judgeGRPC(g *grpcStep, s *core.Sample, out grpcproto.Outcome) {
	code := uint32(out.Code)
	phase := v.w.phase.Load()
	for i := range g.req.checks {
		c := &g.req.checks[i]
		msg := ""
		switch {
		case len(g.codes[i]) > 0 && !containsCode(g.codes[i], code):
			msg = "code " + core.GRPCCodeName(code) + ", want " + codesText(g.codes[i])
		case len(g.codes[i]) == 0 && code != 0:
			msg = "code " + core.GRPCCodeName(code) + ", want OK"
		case g.minMsgs[i] > 0 && out.Messages < g.minMsgs[i]:
			msg = strconv.Itoa(out.Messages) + " messages, want at least " + strconv.Itoa(g.minMsgs[i])
		case g.maxMsgs[i] > 0 && out.Messages > g.maxMsgs[i]:
			msg = strconv.Itoa(out.Messages) + " messages, want at most " + strconv.Itoa(g.maxMsgs[i])
		default:
			msg = v.check(c, s)
		}
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
		s.Class, s.Message = core.GRPCClass(code), msg
		if code == 0 {
			s.Class = core.ErrCheck
		}
	}
}

func containsCode(cs []uint32, c uint32) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

func codesText(cs []uint32) string {
	out := ""
	for i, c := range cs {
		if i > 0 {
			out += " or "
		}
		out += core.GRPCCodeName(c)
	}
	return out
}
