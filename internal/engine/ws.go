package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/ws"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
)

// wsStep opens a WebSocket connection, runs its steps with it open (the
// user's current connection, vu.ws), and closes it. It records the
// handshake under connectLabel and the whole session under label (a
// transaction-like row: abnormal closes are counted there as ws_closed).
type wsStep struct {
	label, connectLabel string
	url                 tmpl
	headers             []hdrTmpl
	tr                  int           // TLS setting (transports)
	timeout             time.Duration // receives' default
	steps               []step
	onFail              string
	redactURL           bool
	rawURL              string
}

// wsSendStep sends one message; with reply it waits for the matching
// message and records the round trip.
type wsSendStep struct {
	label  string
	msg    tmpl
	binary bool
	reply  *wsReceiveStep
	onFail string
}

// wsReceiveStep waits for a message that passes its checks.
type wsReceiveStep struct {
	label   string
	timeout time.Duration // 0: the websocket's
	checks  []check
	extract []extractor
	onFail  string
}

// wsState is a user's open connection.
type wsState struct {
	conn  *ws.Conn
	step  *wsStep
	url   string // as samples show it (secrets masked)
	timer *time.Timer
	// lost is the connection's abnormal end, once a send or receive has
	// met it.
	lost error
}

// errWSEnded ends a websocket's steps when its connection is gone.
var errWSEnded = errors.New("websocket connection ended")

func (c *compiler) websocket(w *plan.WebSocket) *wsStep {
	st := &wsStep{label: w.Name, connectLabel: plan.WSConnectLabel(w.Name), tr: c.tls.index(w.TLS),
		timeout: w.Timeout, onFail: w.OnFail}
	if st.timeout == 0 {
		st.timeout = c.p.HTTP.Timeout
	}
	if st.onFail == "" {
		st.onFail = c.onFail
	}
	c.labels = append(c.labels, st.connectLabel, st.label)
	u := w.URL
	if len(u.Parts) > 0 && u.Parts[0].IsLit() && strings.HasPrefix(u.Parts[0].Lit, "/") {
		// Relative to the target, with its scheme mapped: http → ws.
		prefix := "ws" + strings.TrimPrefix(strings.TrimSuffix(c.base.String(), "/"), "http")
		parts := append([]plan.Part{{Lit: prefix}}, u.Parts...)
		u = plan.Template{Raw: prefix + u.Raw, Parts: parts}
	}
	u = urlTemplate(u, nil, true)
	st.url = c.tmpl(&u)
	st.rawURL = c.p.RedactURL(u.Raw)
	st.redactURL = c.isSecretTemplate(&u) || st.rawURL != u.Raw
	for _, h := range c.p.HTTP.Headers {
		st.headers = append(st.headers, hdrTmpl{name: h.Name, val: c.tmpl(&h.Value)})
	}
	for _, h := range w.Headers {
		st.headers = append(st.headers, hdrTmpl{name: h.Name, val: c.tmpl(&h.Value)})
	}
	prev := c.onFail
	c.onFail = st.onFail
	st.steps = c.steps(w.Steps)
	c.onFail = prev
	return st
}

func (c *compiler) wsSend(s *plan.Send) *wsSendStep {
	m := &wsSendStep{label: s.Name, onFail: s.OnFail}
	if m.onFail == "" {
		m.onFail = c.onFail
	}
	c.labels = append(c.labels, m.label)
	switch {
	case s.Text != nil:
		m.msg = c.tmpl(s.Text)
	case s.JSON != nil:
		m.msg = c.tmpl(s.JSON)
	case s.Binary != nil:
		m.msg, m.binary = c.tmpl(s.Binary), true
	}
	if s.Reply != nil {
		m.reply = c.wsReceive(s.Reply, s.Name)
		m.reply.onFail = m.onFail
	}
	return m
}

// wsReceive compiles a receive step, or a send's reply (labelled by its
// send).
func (c *compiler) wsReceive(r *plan.Receive, label string) *wsReceiveStep {
	rs := &wsReceiveStep{label: label, timeout: r.Timeout, onFail: r.OnFail}
	if rs.onFail == "" {
		rs.onFail = c.onFail
	}
	if r.Name != "" {
		rs.label = r.Name
		c.labels = append(c.labels, rs.label)
	}
	rs.extract = c.extractors(r.Extract)
	for i, pc := range r.Checks {
		k := c.check(&pc)
		name := pc.Name
		if name == "" {
			name = plan.CheckName(rs.label, i, len(r.Checks))
		}
		k.stat = &checkStat{name: name}
		c.checkStats = append(c.checkStats, k.stat)
		rs.checks = append(rs.checks, k)
	}
	return rs
}

func (w *wsStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	if measured && v.stopCtx.Err() != nil && !v.tx.active {
		return v.stopCtx.Err() // the load ended: open nothing new
	}
	rawURL := v.render(&w.url)
	hdr := make(http.Header, len(w.headers)+1)
	for i := range w.headers {
		hdr.Add(w.headers[i].name, v.render(&w.headers[i].val))
	}
	if jar := v.client.CookieJar(); jar != nil {
		if u, err := url.Parse("http" + strings.TrimPrefix(rawURL, "ws")); err == nil {
			var b strings.Builder
			for i, ck := range jar.Cookies(u) {
				if i > 0 {
					b.WriteString("; ")
				}
				b.WriteString(ck.Name + "=" + ck.Value)
			}
			if b.Len() > 0 {
				hdr.Set("Cookie", b.String())
			}
		}
	}
	conn, dr := v.wsDial(ctx, w.tr, rawURL, hdr)
	if conn == nil && ctx.Err() != nil {
		return ctx.Err() // stopped while connecting: not a measurement
	}
	cs := core.Sample{Label: w.connectLabel, Start: dr.Start.UnixNano(), Elapsed: dr.Connect, Service: dr.Connect,
		Connect: dr.Connect, TTFB: dr.Connect, Status: dr.Status, Class: dr.Class, Thread: v.thread}
	cs.Intended = cs.Start
	if !v.firstIntended.IsZero() {
		// First step of an open-model or paced iteration: from the
		// intended start, as for a request.
		cs.Intended = v.firstIntended.UnixNano()
		cs.Elapsed += time.Duration(cs.Start - cs.Intended)
		v.firstIntended = time.Time{}
	}
	if dr.Err != nil {
		cs.Message = metrics.NormalizeMessage(dr.Err.Error()) + v.excerpt(dr.Body)
	}
	cs.URL = rawURL
	if w.redactURL {
		cs.URL = w.rawURL
	}
	v.trace.ws(v, "connect", &cs, nil, nil, nil)
	if err := v.wsRecord(measured, &cs); err != nil || conn == nil {
		if err != nil {
			return err
		}
		return outcome(w.onFail)
	}

	st := &wsState{conn: conn, step: w, url: cs.URL, timer: time.NewTimer(time.Hour)}
	st.timer.Stop()
	prev := v.ws
	v.ws = st
	err := runSteps(ctx, v, w.steps, measured, s)
	v.ws = prev
	lost := conn.Close()
	if st.lost != nil {
		lost = st.lost
	}
	if errors.Is(err, errWSEnded) {
		err = nil
	}
	if measured {
		_, sentB, _, recvB := conn.Counts()
		sess := core.Sample{Label: w.label, Intended: cs.Start, Start: cs.Start, Elapsed: time.Since(dr.Start),
			BytesSent: sentB, BytesRecv: recvB, Status: dr.Status, Thread: v.thread, URL: cs.URL, Transaction: true,
			GroupThreads: int32(v.w.active.Load()), AllThreads: int32(v.w.e.activeUsers.Load())}
		sess.Service = sess.Elapsed
		if lost != nil {
			sess.Class, sess.Message = ws.Classify(lost), v.redact(metrics.NormalizeMessage(lost.Error()))
		}
		v.w.e.record(v, w.label, true, &sess)
	}
	return err
}

func (m *wsSendStep) run(ctx context.Context, v *vu, measured bool, _ *core.Sample) error {
	st := v.ws
	if measured && v.stopCtx.Err() != nil && !v.tx.active {
		return v.stopCtx.Err()
	}
	msg := v.renderBytes(&m.msg)
	s := core.Sample{Label: m.label, Thread: v.thread, BytesSent: int64(len(msg)), URL: v.wsURL()}
	start := time.Now()
	err := st.conn.Send(m.binary, msg, v.w.e.clientCfg.Timeout)
	s.Start, s.Intended = start.UnixNano(), start.UnixNano()
	switch {
	case err != nil:
		s.Elapsed = time.Since(start)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		st.lost = err
		s.Class, s.Message = ws.Classify(err), metrics.NormalizeMessage(err.Error())
	case m.reply != nil:
		if err := v.await(ctx, st, m.reply, start, &s); err != nil {
			return err
		}
	default:
		s.Elapsed = time.Since(start)
	}
	s.Service = s.Elapsed
	if v.trace != nil {
		var got []byte
		var xs []extractor
		if m.reply != nil && s.Class == core.ErrNone {
			got, xs = v.res.Body, m.reply.extract
		}
		v.trace.ws(v, "send", &s, msg, got, xs)
	}
	return v.wsOutcome(st, measured, m.onFail, &s)
}

func (r *wsReceiveStep) run(ctx context.Context, v *vu, measured bool, _ *core.Sample) error {
	st := v.ws
	if measured && v.stopCtx.Err() != nil && !v.tx.active {
		return v.stopCtx.Err()
	}
	start := time.Now()
	s := core.Sample{Label: r.label, Thread: v.thread, Start: start.UnixNano(), Intended: start.UnixNano(), URL: v.wsURL()}
	if err := v.await(ctx, st, r, time.Time{}, &s); err != nil {
		return err
	}
	s.Service = s.Elapsed
	if v.trace != nil {
		var got []byte
		if s.Class == core.ErrNone || s.Class == core.ErrCheck {
			got = v.res.Body
		}
		v.trace.ws(v, "receive", &s, nil, got, r.extract)
	}
	return v.wsOutcome(st, measured, r.onFail, &s)
}

// wsURL is the current websocket's URL as samples show it.
func (v *vu) wsURL() string { return v.ws.url }

// await waits for the first message, arrived after since (a reply must
// not be an older message), that passes r's checks, for at most r's
// timeout; the others are skipped. The matching message becomes the
// last response (checks, extraction and conditions read its body) and
// s.Elapsed is from s.Start to its arrival. It returns an error only when
// ctx ends.
func (v *vu) await(ctx context.Context, st *wsState, r *wsReceiveStep, since time.Time, s *core.Sample) error {
	start := time.Unix(0, s.Start)
	timeout := r.timeout
	if timeout == 0 {
		timeout = st.step.timeout
	}
	if timeout <= 0 {
		timeout = httpc.DefaultTimeout
	}
	st.timer.Reset(timeout)
	defer st.timer.Stop()
	skipped := 0
	why := ""
	for {
		m, err := st.conn.Next(ctx, st.timer)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.Elapsed = time.Since(start)
			s.Class = ws.Classify(err)
			if errors.Is(err, ws.ErrTimeout) {
				s.Message = "no matching message within " + timeout.String()
			} else {
				st.lost = err
				s.Message = metrics.NormalizeMessage(err.Error()) + " while waiting for a message"
			}
			if skipped > 0 {
				s.Message += " (" + strconv.Itoa(skipped) + " skipped; last: " + why + ")"
			}
			phase := v.w.phase.Load()
			for i := range r.checks {
				r.checks[i].stat.count(phase, false)
			}
			return nil
		}
		if m.At.Before(since) {
			skipped++
			why = "arrived before the send"
			continue
		}
		v.res.Body, v.res.BodySize, v.docDone = m.Data, int64(m.Size), false
		s.BytesRecv = int64(m.Size)
		s.Elapsed = max(m.At.Sub(start), 0)
		why = ""
		for i := range r.checks {
			if why = v.check(&r.checks[i], s); why != "" {
				break
			}
		}
		if why != "" {
			skipped++
			continue
		}
		phase := v.w.phase.Load()
		for i := range r.checks {
			r.checks[i].stat.count(phase, true)
		}
		v.extractFailed = false
		v.extract(r.extract, s)
		if s.Class != core.ErrNone {
			s.Message = v.redact(s.Message)
		}
		return nil
	}
}

// wsOutcome records a send or receive sample and says what comes next:
// the step's on_fail outcome when it failed, and the end of the
// websocket's steps when its connection is gone.
func (v *vu) wsOutcome(st *wsState, measured bool, onFail string, s *core.Sample) error {
	if err := v.wsRecord(measured, s); err != nil {
		return err
	}
	if s.Class == core.ErrNone {
		return nil
	}
	mode := onFail
	if mode == "" && v.extractFailed {
		mode = plan.OnFailNextIteration
	}
	if err := outcome(mode); err != nil {
		return err
	}
	if st.lost != nil {
		return errWSEnded
	}
	return nil
}

// wsRecord records a websocket sample (measured) or turns a failure in
// setup or teardown into errSetupFailed.
func (v *vu) wsRecord(measured bool, s *core.Sample) error {
	if s.Message != "" {
		s.Message = v.redact(s.Message)
	}
	if !measured {
		if s.Class != core.ErrNone {
			return fmt.Errorf("%w: %s: %s", errSetupFailed, s.Label, s.Message)
		}
		return nil
	}
	v.note(s.Label, s)
	return nil
}
