// Package influx pushes a running test's per-second numbers to InfluxDB in
// line protocol (plateau run --out influxdb=URL), in the layout of JMeter's
// InfluxDB Backend Listener so its Grafana dashboards work unchanged.
//
// Each second becomes, in measurement "jmeter" (tags in lexical order):
//
//	jmeter,application=<plan>,statut=all,transaction=<label>  count,countError,hit,avg,min,max,pct50.0,pct90.0,pct95.0,pct99.0,rb,sb
//	jmeter,application=<plan>,statut=ok,transaction=<label>   count
//	jmeter,application=<plan>,statut=ko,transaction=<label>   count
//	jmeter,application=<plan>,statut=all,transaction=all      the same over every label
//	jmeter,application=<plan>,transaction=internal            startedT,endedT,meanAT,minAT,maxAT (active users)
//
// Times are milliseconds, counts are per second (not cumulative), as the
// Backend Listener writes them. A distributed generator adds generator=i.
// Transactions (parent samples) are not requests and are left out of "all".
// The URL is posted to as given: http://host:8086/write?db=plateau (1.x) or
// http://host:8086/api/v2/write?org=o&bucket=b (2.x; a token goes in
// INFLUX_TOKEN, never in the URL).
package influx

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/influxdata/line-protocol/v2/lineprotocol"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/output"
)

// Writer is the InfluxDB output. Add is called from one goroutine.
type Writer struct {
	url, app, generator, token string
	client                     *http.Client
	enc                        lineprotocol.Encoder
}

var _ output.Output = (*Writer)(nil)

// New returns a writer posting to url. token, when set, is sent as
// "Authorization: Token …" (InfluxDB 2.x).
func New(u *url.URL, application, generator, token string) *Writer {
	// Timestamps are in ms; say so unless the URL already does.
	cp := *u
	q := cp.Query()
	if q.Get("precision") == "" {
		q.Set("precision", "ms")
		cp.RawQuery = q.Encode()
	}
	w := &Writer{url: cp.String(), app: application, generator: generator, token: token,
		client: &http.Client{Timeout: 10 * time.Second}}
	w.enc.SetPrecision(lineprotocol.Millisecond)
	return w
}

// Add encodes the second and posts it.
func (w *Writer) Add(s *output.Snapshot) error {
	body := w.Encode(s)
	if len(body) == 0 {
		return nil
	}
	return w.post(body)
}

// Encode renders one snapshot as line protocol. The returned slice is valid
// until the next call.
func (w *Writer) Encode(s *output.Snapshot) []byte {
	w.enc.Reset()
	t := s.Time.Add(time.Second)
	if now := time.Now(); t.After(now) {
		t = now // the partial last second
	}
	all := &output.Series{MinUs: -1}
	var users int64
	for _, wl := range s.Workloads {
		users += int64(wl.Users)
	}
	for i := range s.Series {
		x := &s.Series[i]
		if x.Tx {
			continue
		}
		w.series(x.Label, x, t)
		all.Count += x.Count
		all.Errors += x.Errors
		all.SumUs += x.SumUs
		all.Sent += x.Sent
		all.Recv += x.Recv
		if x.Count > 0 {
			if all.MinUs < 0 || x.MinUs < all.MinUs {
				all.MinUs = x.MinUs
			}
			all.MaxUs = max(all.MaxUs, x.MaxUs)
			all.Hist.Values = append(all.Hist.Values, x.Hist.Values...)
			all.Hist.High = append(all.Hist.High, x.Hist.High...)
			all.Hist.Counts = append(all.Hist.Counts, x.Hist.Counts...)
			all.Hist.Total += x.Hist.Total
		}
	}
	if all.Count > 0 {
		all.Hist = sorted(all.Hist)
		w.series("all", all, t)
	}
	if !s.Final {
		w.start("")
		w.enc.AddTag("transaction", "internal")
		w.enc.AddField("meanAT", lineprotocol.IntValue(users))
		w.enc.AddField("minAT", lineprotocol.IntValue(users))
		w.enc.AddField("maxAT", lineprotocol.IntValue(users))
		w.enc.AddField("startedT", lineprotocol.IntValue(users))
		w.enc.AddField("endedT", lineprotocol.IntValue(0))
		w.enc.EndLine(t)
	}
	return w.enc.Bytes()
}

func (w *Writer) start(statut string) {
	w.enc.StartLine("jmeter")
	w.enc.AddTag("application", w.app)
	if w.generator != "" {
		w.enc.AddTag("generator", w.generator)
	}
	if statut != "" {
		w.enc.AddTag("statut", statut)
	}
}

func (w *Writer) series(label string, x *output.Series, t time.Time) {
	if label == "" {
		label = "(empty)"
	}
	f := func(v float64) lineprotocol.Value { return lineprotocol.MustNewValue(v) }
	w.start("all")
	w.enc.AddTag("transaction", label)
	w.enc.AddField("count", lineprotocol.IntValue(x.Count))
	w.enc.AddField("countError", lineprotocol.IntValue(x.Errors))
	w.enc.AddField("hit", lineprotocol.IntValue(x.Count))
	if x.Count > 0 {
		w.enc.AddField("avg", f(x.MeanMs()))
		w.enc.AddField("min", f(float64(x.MinUs)/1000))
		w.enc.AddField("max", f(float64(x.MaxUs)/1000))
		w.enc.AddField("pct50.0", f(x.Quantile(50)))
		w.enc.AddField("pct90.0", f(x.Quantile(90)))
		w.enc.AddField("pct95.0", f(x.Quantile(95)))
		w.enc.AddField("pct99.0", f(x.Quantile(99)))
	}
	w.enc.AddField("rb", lineprotocol.IntValue(x.Recv))
	w.enc.AddField("sb", lineprotocol.IntValue(x.Sent))
	w.enc.EndLine(t)
	for _, st := range []struct {
		name string
		n    int64
	}{{"ok", x.Count - x.Errors}, {"ko", x.Errors}} {
		w.start(st.name)
		w.enc.AddTag("transaction", label)
		w.enc.AddField("count", lineprotocol.IntValue(st.n))
		w.enc.EndLine(t)
	}
}

// sorted merges the concatenated buckets of several labels into ascending
// order (a percentile needs them sorted).
func sorted(h metrics.Sparse) metrics.Sparse {
	type b struct{ v, hi, n int64 }
	bs := make([]b, len(h.Values))
	for i := range bs {
		bs[i] = b{h.Values[i], h.High[i], h.Counts[i]}
	}
	slices.SortFunc(bs, func(x, y b) int { return cmp.Compare(x.v, y.v) })
	out := metrics.Sparse{Total: h.Total}
	for _, x := range bs {
		if n := len(out.Values); n > 0 && out.Values[n-1] == x.v {
			out.Counts[n-1] += x.n
			continue
		}
		out.Values = append(out.Values, x.v)
		out.High = append(out.High, x.hi)
		out.Counts = append(out.Counts, x.n)
	}
	return out
}

func (w *Writer) post(body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	if w.token != "" {
		req.Header.Set("Authorization", "Token "+w.token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return fmt.Errorf("influxdb: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("influxdb: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}

// Close does nothing: every Add posted its lines.
func (w *Writer) Close() error { return nil }
