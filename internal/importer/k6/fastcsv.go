package k6

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
)

// decodeCSVFast decodes the rows of one chunk of a k6 CSV output as
// decodeCSV does, without encoding/csv, which cost more than the rest of
// the import beside a k6 run (docs/performance.md). k6's CSV writer
// (encoding/csv's Writer) quotes a field only when it holds a comma, a
// quote or a line break, so a row without a quote is its fields joined by
// commas: such rows are cut at their commas, and only the columns a
// wanted metric uses are cut at all. From the first row that holds a
// quote (an error message k6 quoted) is read by decodeCSV, the reference
// this path is tested against (fastcsv_test.go), and so is the rest of a
// chunk whose quotes do not make whole records. It returns line plus the
// line ends data holds: the number of the line after the chunk.
func (d *decoder) decodeCSVFast(data []byte, line int64, c *csvColumns, b *batch) int64 {
	return d.decodeCSVRows(data, line, c, b, bytes.IndexByte(data, '"'))
}

// decodeCSVRows is decodeCSVFast given where data's first quote is (−1:
// none), which the chunk's cut may know (importer.Chunk.NoQuote).
func (d *decoder) decodeCSVRows(data []byte, line int64, c *csvColumns, b *batch, q int) int64 {
	k6Layout := c.metric == 0 && c.time == 1 && c.value == 2
	for len(data) > 0 {
		// The rows of a request the import reads (its duration, whether it
		// failed, the iteration it ended) are decoded where they start,
		// without first looking for their line end (below): a duration
		// row with the last tagged row's tags ends where those tags do.
		if k6Layout && line != 1 && len(data) > 10 && (data[0] == 'h' && (data[9] == 'd' || data[9] == 'f') || data[0] == 'i') {
			if n := d.requestRow(data, q, line, c, b); n > 0 {
				data, line = data[n:], line+1
				if q >= 0 {
					q -= n
				}
				continue
			}
		}
		raw, next, whole := data, []byte(nil), false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, next, whole = data[:i], data[i+1:], true
		}
		if q >= 0 && q < len(raw) {
			n, lines := quotedRecord(data)
			if n == 0 {
				d.decodeCSV(data, line, c, b)
				return line + int64(bytes.Count(data, []byte{'\n'}))
			}
			d.decodeCSV(data[:n], line, c, b)
			data, line = data[n:], line+lines
			q = bytes.IndexByte(data, '"')
			continue
		}
		if q >= 0 {
			q -= len(raw) + 1
		}
		// Rows of http_req_ metrics other than duration and failed, and
		// of data_ metrics, are told apart here, without a call.
		skip := whole && c.metric == 0 && len(raw) > 9 && (raw[0] == 'h' && raw[9] != 'd' && raw[9] != 'f' || raw[0] == 'd')
		if line != 1 && !skip { // line 1: the header
			d.csvLine(raw, whole, line, c, b)
		}
		data = next
		if whole {
			line++
		}
	}
	return line
}

// requestRow decodes the row data starts with as csvLine would, when it
// is an http_req_duration, http_req_failed or iterations row of the form
// k6 writes (epoch digits, a %f value, its line end; a duration row's
// tags those of the last tagged row, d.tail), and returns its length with
// its line end. Any other row — and one holding data's first quote, at q
// — it leaves to the general path: n is 0 and nothing was added.
func (d *decoder) requestRow(data []byte, q int, line int64, c *csvColumns, b *batch) (n int) {
	var metric string
	switch {
	case data[0] == 'i':
		metric = "iterations"
	case data[9] == 'd':
		metric = "http_req_duration"
		if !d.tail.ok || c.tagsFrom != 3 {
			return 0
		}
	default:
		metric = "http_req_failed"
	}
	if len(data) <= len(metric) || string(data[:len(metric)]) != metric || data[len(metric)] != ',' {
		return 0
	}
	i := len(metric) + 1
	ts := i
	for i < len(data) && data[i]-'0' < 10 {
		i++
	}
	if i == len(data) || data[i] != ',' {
		return 0
	}
	tsEnd := i
	i++
	vs := i
	for i < len(data) && data[i] != ',' && data[i] != '\n' {
		i++
	}
	if i == len(data) || data[i] != ',' {
		return 0
	}
	v, ok := fixedFloat(data[vs:i])
	if !ok {
		return 0
	}
	var t int64
	if metric != "http_req_failed" {
		if t, ok = epochDigits(data[ts:tsEnd]); !ok {
			return 0
		}
	}
	// The line end: just after the last tagged row's tags, when this
	// row's are the same (they are for a request's duration and failed
	// rows), else looked for.
	i++
	if tl := d.tail.b; d.tail.ok && len(data) > i+len(tl) && data[i+len(tl)] == '\n' && bytes.Equal(data[i:i+len(tl)], tl) {
		n = i + len(tl) + 1
	} else if metric == "http_req_duration" {
		return 0 // other tags: csvLine reads and keeps them
	} else if e := bytes.IndexByte(data[i:], '\n'); e >= 0 {
		n = i + e + 1
	} else {
		return 0
	}
	if q >= 0 && q < n || data[n-2] == '\r' {
		return 0 // a quoted field, a CR LF line end: csvLine's and encoding/csv's rules
	}
	p := &d.pt
	*p = point{}
	p.Metric, p.Type = metric, "Point"
	if metric == "http_req_duration" {
		if v < 0 {
			return 0 // a problem, reported by csvLine
		}
		p.Data.Tags = d.tail.tags
	}
	d.add(p, v, t, line, data[:n-1], b)
	return n
}

// quotedRecord is the length of the record data starts with, up to and
// with the line break that ends it outside quotes, and the lines it
// spans, when encoding/csv reads those bytes as that one record without
// an error; otherwise n is 0.
func quotedRecord(data []byte) (n int, lines int64) {
	odd := false
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return 0, 0 // the last record, without its line end
		}
		odd = odd != (bytes.Count(data[i:i+j], []byte{'"'})%2 == 1)
		i += j + 1
		lines++
		if !odd {
			n = i
			break
		}
	}
	if n == 0 {
		return 0, 0
	}
	r := csv.NewReader(bytes.NewReader(data[:n]))
	r.FieldsPerRecord = -1
	if _, err := r.Read(); err != nil || r.InputOffset() != int64(n) {
		return 0, 0
	}
	return n, lines
}

// csvLine decodes one unquoted row, its line break cut off (whole: it had
// one).
func (d *decoder) csvLine(raw []byte, whole bool, lineNo int64, c *csvColumns, b *batch) {
	if n := len(raw); n > 0 && raw[n-1] == '\r' {
		raw = raw[:n-1] // encoding/csv drops the \r of a \r\n, and one before the end
	}
	if len(raw) == 0 {
		return // encoding/csv skips empty lines
	}
	if !whole {
		// Only a file's last row can lack its line end: k6 ends every
		// row with one, so this row was cut as k6 wrote it.
		if bytes.IndexByte(raw, ',') < 0 && len(bytes.TrimSpace(raw)) == 0 {
			return
		}
		b.probs.Add(lineNo, truncatedRow, raw)
		return
	}
	upto := c.last // the last column to cut out
	tagged := false
	if c.metric == 0 {
		// k6's layout: the metric first. Most of k6's rows (eleven of the
		// thirteen a request writes) are of metrics the import does not
		// use: they are told by their first bytes and not cut at all.
		m := wantedPrefix(raw)
		if m == "" {
			return
		}
		if m != "http_req_duration" && m != "group_duration" && m != "checks" {
			upto = max(c.time, c.value) // the value alone is used
		} else {
			tagged = c.tagsFrom > 0
		}
	}
	// The columns up to upto, looked for byte by byte: the fields are
	// short, and a call of bytes.IndexByte for each cost more. A row
	// whose tags (all after its value) are the bytes of the last tagged
	// row's — a script's requests come in runs of the same one — takes
	// that row's tags and is cut no further than its value.
	split := upto
	if tagged {
		split = c.tagsFrom - 1
	}
	fs := d.fields[:0]
	from, i := 0, 0
	for ; i < len(raw); i++ {
		if raw[i] == ',' {
			fs = append(fs, raw[from:i])
			from = i + 1
			if len(fs) > split {
				i++
				break
			}
		}
	}
	same := false
	if tagged && len(fs) > split {
		tail := raw[from:]
		if d.tail.ok && bytes.Equal(tail, d.tail.b) {
			same = true
		} else {
			d.tail.b, d.tail.ok = append(d.tail.b[:0], tail...), false
			for ; i < len(raw) && len(fs) <= upto; i++ {
				if raw[i] == ',' {
					fs = append(fs, raw[from:i])
					from = i + 1
				}
			}
		}
	}
	if !same && len(fs) <= upto {
		fs = append(fs, raw[from:])
	}
	d.fields = fs
	if len(fs) == 1 && len(bytes.TrimSpace(fs[0])) == 0 {
		return
	}
	if len(fs) <= c.metric {
		b.probs.Add(lineNo, d.fewFields(raw, c), raw)
		return
	}
	metric := fs[c.metric]
	if !wantedBytes(metric) {
		return
	}
	if len(fs) <= max(c.time, c.value) {
		b.probs.Add(lineNo, d.fewFields(raw, c), raw)
		return
	}
	v, ok := fixedFloat(fs[c.value])
	if !ok {
		var err error
		v, err = strconv.ParseFloat(string(fs[c.value]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			b.probs.Add(lineNo, "metric_value is not a number", raw)
			return
		}
	}
	p := &d.pt
	*p = point{}
	p.Metric, p.Type = intern(metric), "Point"
	if v < 0 && (p.Metric == "http_req_duration" || p.Metric == "group_duration") {
		b.probs.Add(lineNo, "negative duration", raw)
		return
	}
	var t int64
	if timed(p.Metric) {
		if t, ok = epochDigits(fs[c.time]); !ok {
			var err error
			if t, err = csvTime(string(fs[c.time])); err != nil {
				b.probs.Add(lineNo, "time: "+err.Error(), raw)
				return
			}
		}
	}
	switch p.Metric {
	case "http_req_duration", "group_duration", "checks":
		tg := &p.Data.Tags
		if same {
			*tg = d.tail.tags
			break
		}
		tg.Name, tg.URL, tg.Method, tg.Status = d.col(0, fs, c.name), d.col(1, fs, c.url), d.col(2, fs, c.method), d.col(3, fs, c.status)
		tg.ExpectedResponse, tg.Error, tg.ErrorCode = d.col(4, fs, c.expected), d.col(5, fs, c.errMsg), d.col(6, fs, c.errCode)
		tg.Group, tg.Check = d.col(7, fs, c.group), d.col(8, fs, c.check)
		if tagged {
			d.tail.tags, d.tail.ok = *tg, true
		}
	}
	d.add(p, v, t, lineNo, raw, b)
}

// truncatedRow is the problem of a last row without its line end.
const truncatedRow = "the row has no line end: k6 stopped while writing it (left out)"

// wantedPrefix is the wanted metric raw starts with, followed by a comma
// or the row's end, or "".
func wantedPrefix(raw []byte) string {
	var m string
	switch raw[0] {
	case 'h':
		m = "http_req_duration"
		if len(raw) > 9 && raw[9] == 'f' {
			m = "http_req_failed"
		}
	case 'v':
		m = "vus"
	case 'i':
		m = "iterations"
	case 'g':
		m = "group_duration"
	case 'c':
		m = "checks"
	default:
		return ""
	}
	if len(raw) < len(m) || string(raw[:len(m)]) != m || (len(raw) > len(m) && raw[len(m)] != ',') {
		return ""
	}
	return m
}

// fixedFloat reads a number as k6 writes metric values (Go's %f: digits,
// a point, six digits) exactly as strconv.ParseFloat does: the digits
// make an integer below 2^53 and the division by a power of ten up to
// 10^22 is then rounded once, correctly (the exact case strconv itself
// takes first). ok is false for any other form.
func fixedFloat(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false // more than 15 digits may pass 2^53
	}
	var m uint64
	frac, point := 0, false
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + uint64(c-'0')
			if point {
				frac++
			}
		case c == '.' && !point && i > 0 && i < len(b)-1:
			point = true
		default:
			return 0, false
		}
	}
	if len(b) > 1 && b[0] == '0' && b[1] != '.' {
		return 0, false // a leading zero: strconv takes it, k6 does not write it
	}
	v := float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16}

// fewFields is the problem of a row with fewer fields than the import
// needs, worded as decodeCSV words it.
func (d *decoder) fewFields(raw []byte, c *csvColumns) string {
	return strconv.Itoa(bytes.Count(raw, []byte{','})+1) + " fields, the header has " + strconv.Itoa(c.n)
}

// col is the string of column i of fs (−1: absent), kept in slot so that
// the values every row repeats (a name, a URL) are converted once a chunk.
func (d *decoder) col(slot int, fs [][]byte, i int) string {
	if i < 0 || i >= len(fs) || len(fs[i]) == 0 {
		return ""
	}
	b := fs[i]
	s := &d.cols[slot]
	if s.ok && bytes.Equal(b, s.b) {
		return s.s
	}
	s.b, s.s, s.ok = append(s.b[:0], b...), intern(b), true
	return s.s
}

// tailCache is the tags of the last tagged row (http_req_duration,
// group_duration, checks) and the bytes they were cut from: the row after
// its value.
type tailCache struct {
	b    []byte
	tags tags
	ok   bool
}

// colCache is the last value a column held, as bytes and as a string.
type colCache struct {
	b  []byte
	s  string
	ok bool
}

// epochDigits reads an epoch time stamp of csvTime's digit forms without
// converting it to a string; ok is false for anything else (csvTime then
// reads or refuses it).
func epochDigits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 || (len(b) == 19 && string(b) > "9223372036854775807") {
		return 0, false // out of int64's range (or not digits): csvTime says so
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	switch {
	case len(b) <= 10:
		return n * 1e9, true
	case len(b) <= 13:
		return n * 1e6, true
	case len(b) <= 16:
		return n * 1e3, true
	}
	return n, true
}

// wantedBytes is wanted[string(m)] for the metrics the import uses.
func wantedBytes(m []byte) bool {
	switch string(m) {
	case "http_req_duration", "http_req_failed", "vus", "iterations", "group_duration", "checks":
		return true
	}
	return false
}
