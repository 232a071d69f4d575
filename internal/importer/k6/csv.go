package k6

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// csvColumns maps the columns of k6's --out csv header (output/csv:
// metric_name, timestamp, metric_value, check, error, error_code,
// expected_response, group, method, name, proto, scenario, service,
// status, subproto, tls_version, url, extra_tags, metadata; older k6
// versions write fewer) to their positions; −1 when absent.
type csvColumns struct {
	metric, time, value                             int
	check, errMsg, errCode, expected, group, method int
	name, status, url                               int
	n                                               int
	last                                            int  // the last column the import reads
	wholeSeconds                                    bool // the first row's time is unix seconds
}

// readCSVHeader reads the header line at the start of head and the time
// format of the first data row.
func readCSVHeader(head []byte) (*csvColumns, error) {
	r := csv.NewReader(bytes.NewReader(head))
	r.FieldsPerRecord = -1
	h, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("reading the k6 CSV header: %w", err)
	}
	c := &csvColumns{metric: -1, time: -1, value: -1, check: -1, errMsg: -1, errCode: -1, expected: -1, group: -1,
		method: -1, name: -1, status: -1, url: -1, n: len(h)}
	for i, f := range h {
		switch strings.TrimSpace(strings.TrimPrefix(f, "\ufeff")) {
		case "metric_name":
			c.metric = i
		case "timestamp":
			c.time = i
		case "metric_value":
			c.value = i
		case "check":
			c.check = i
		case "error":
			c.errMsg = i
		case "error_code":
			c.errCode = i
		case "expected_response":
			c.expected = i
		case "group":
			c.group = i
		case "method":
			c.method = i
		case "name":
			c.name = i
		case "status":
			c.status = i
		case "url":
			c.url = i
		}
	}
	if c.metric < 0 || c.time < 0 || c.value < 0 {
		return nil, errors.New("the k6 CSV header lacks metric_name, timestamp or metric_value")
	}
	c.last = max(c.metric, c.time, c.value, c.check, c.errMsg, c.errCode, c.expected, c.group, c.method, c.name, c.status, c.url)
	if rec, err := r.Read(); err == nil && c.time < len(rec) {
		ts := rec[c.time]
		c.wholeSeconds = len(ts) > 0 && len(ts) <= 10 && strings.Trim(ts, "0123456789") == ""
	}
	return c, nil
}

// primaryHost is scheme://host of the first request row in head, or "".
func (c *csvColumns) primaryHost(head []byte) string {
	if c.url < 0 {
		return ""
	}
	r := csv.NewReader(bytes.NewReader(head))
	r.FieldsPerRecord = -1
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil || len(rec) <= max(c.metric, c.url) || rec[c.metric] != "http_req_duration" {
			continue
		}
		u, err := url.Parse(rec[c.url])
		if err != nil || u.Scheme == "" || u.Host == "" {
			return ""
		}
		return u.Scheme + "://" + u.Host
	}
}

// csvTime reads a k6 CSV time stamp in any of its time formats
// (K6_CSV_TIME_FORMAT): unix (seconds, the default), unix_milli,
// unix_micro, unix_nano — told apart by the digit count, as epoch times
// of this era have 10, 13, 16 and 19 digits — and rfc3339(_nano).
func csvTime(s string) (int64, error) {
	if s != "" && strings.Trim(s, "0123456789") == "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("time stamp %q: %w", s, err)
		}
		switch {
		case len(s) <= 10:
			return n * 1e9, nil
		case len(s) <= 13:
			return n * 1e6, nil
		case len(s) <= 16:
			return n * 1e3, nil
		default:
			return n, nil
		}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("time stamp %q is neither epoch digits nor RFC 3339", s)
	}
	return t.UnixNano(), nil
}

// decodeCSV decodes the rows of one chunk of a k6 CSV file into the same
// points the JSON stream holds, and adds them as decode does.
func (d *decoder) decodeCSV(data []byte, line int64, c *csvColumns, b *batch) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	first := true
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			ln, msg := line, err.Error()
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				// The problem carries the file's line; encoding/csv's own
				// counts from the chunk's start.
				ln = line + int64(pe.StartLine) - 1
				msg = fmt.Sprintf("line %d, column %d: %v", line+int64(pe.Line)-1, pe.Column, pe.Err)
			}
			b.probs.Add(ln, "not a CSV row: "+msg, nil)
			continue
		}
		ln := line
		if l, _ := r.FieldPos(0); l > 0 { // only valid after a row was read
			ln = line + int64(l) - 1
		}
		if first && line == 1 {
			first = false
			continue // the header
		}
		first = false
		// A row that ends the data without a line end was cut as k6
		// wrote it (a chunk ends after one otherwise).
		whole := r.InputOffset() < int64(len(data)) || data[len(data)-1] == '\n'
		d.csvRow(rec, whole, ln, c, b)
	}
}

// timed says whether the import uses the time of a metric's points:
// http_req_failed is only counted (iterations are counted per second, the
// arrivals a declared arrival rate is checked against).
func timed(metric string) bool {
	return metric != "http_req_failed"
}

func field(rec []string, i int) string {
	if i < 0 || i >= len(rec) {
		return ""
	}
	return rec[i]
}

// csvRow decodes one row (whole: it had its line end). Rows of metrics
// the import does not use are not looked at beyond their metric.
func (d *decoder) csvRow(rec []string, whole bool, lineNo int64, c *csvColumns, b *batch) {
	raw := func() []byte { return []byte(strings.Join(rec, ",")) }
	if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
		return
	}
	if !whole {
		b.probs.Add(lineNo, truncatedRow, raw())
		return
	}
	if len(rec) <= c.metric {
		b.probs.Add(lineNo, fmt.Sprintf("%d fields, the header has %d", len(rec), c.n), raw())
		return
	}
	metric := rec[c.metric]
	if !wanted[metric] {
		return
	}
	if len(rec) <= max(c.time, c.value) {
		b.probs.Add(lineNo, fmt.Sprintf("%d fields, the header has %d", len(rec), c.n), raw())
		return
	}
	v, err := strconv.ParseFloat(rec[c.value], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		b.probs.Add(lineNo, "metric_value is not a number", raw())
		return
	}
	if v < 0 && (metric == "http_req_duration" || metric == "group_duration") {
		b.probs.Add(lineNo, "negative duration", raw())
		return
	}
	var t int64
	if timed(metric) {
		if t, err = csvTime(rec[c.time]); err != nil {
			b.probs.Add(lineNo, "time: "+err.Error(), raw())
			return
		}
	}
	d.pt = point{}
	p := &d.pt
	p.Metric, p.Type = metric, "Point"
	tg := &p.Data.Tags
	tg.Name, tg.URL, tg.Method, tg.Status = field(rec, c.name), field(rec, c.url), field(rec, c.method), field(rec, c.status)
	tg.ExpectedResponse, tg.Error, tg.ErrorCode = field(rec, c.expected), field(rec, c.errMsg), field(rec, c.errCode)
	tg.Group, tg.Check = field(rec, c.group), field(rec, c.check)
	d.add(p, v, t, lineNo, nil, b)
}
