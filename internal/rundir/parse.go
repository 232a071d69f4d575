package rundir

import (
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseRecord decodes one line of intervals.ndjson into r as json.Unmarshal
// does into a zero IntervalRecord. Lines in the shape AppendJSON writes
// (any key order and spacing, no unknown or repeated keys) are read by a scanner of that
// shape, 10× cheaper than encoding/json's reflection, which was a quarter
// of the CPU of reporting a long run; any other line — an escape, a float,
// null, a key in another case, a syntax error — goes to json.Unmarshal, so
// the result and the errors are encoding/json's (FuzzParseRecord holds the
// two to each other).
func ParseRecord(line []byte, r *IntervalRecord) error {
	var p Parser
	return p.Parse(line, r)
}

// Parser is ParseRecord with a table of the names it has seen, so a
// reader of many records makes one string per distinct label, not one per
// record. The zero value is ready; not safe for concurrent use.
type Parser struct {
	// HistText, when set, leaves a record's "hist" out of the record and
	// gives its text in Hist instead (valid until the next Parse): a
	// reader that decodes the histogram at once need not copy it.
	HistText bool
	Hist     []byte

	b       []byte
	i       int
	tmp     []byte // an unescaped string
	escaped bool   // the last string read was unescaped into tmp
	names   map[string]string
}

// maxNames bounds the table: labels with ids in them stop being interned.
const maxNames = 4096

func (p *Parser) Parse(line []byte, r *IntervalRecord) error {
	*r = IntervalRecord{}
	p.b, p.i, p.Hist = line, 0, nil
	ok := p.record(r)
	p.b = nil
	if ok {
		return nil
	}
	*r = IntervalRecord{}
	p.Hist = nil
	err := json.Unmarshal(line, r)
	if err == nil && p.HistText && r.Hist != "" {
		p.Hist, r.Hist = []byte(r.Hist), ""
	}
	return err
}

func (p *Parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c (after white space).
func (p *Parser) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plain marks the bytes a string's scan steps over: printable ASCII but the
// quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// raw returns a string's text: a slice of the line, or when the string has
// escapes its unescaped copy in p.tmp (valid until the next call). Strings
// with raw bytes that are not UTF-8, control characters or escaped
// surrogates are not taken (encoding/json replaces those with U+FFFD).
func (p *Parser) raw() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	ascii := true
	p.escaped = false
	var out []byte // non-nil once an escape was seen
	for p.i < len(p.b) {
		for p.i < len(p.b) && plain[p.b[p.i]] {
			p.i++
		}
		if p.i == len(p.b) {
			break
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return nil, false
			}
			if out != nil {
				out = append(out, s...)
				p.tmp, p.escaped = out, true
				return out, true
			}
			return s, true
		case c == '\\':
			if !ascii && !utf8.Valid(p.b[start:p.i]) {
				return nil, false
			}
			if out == nil {
				out = p.tmp[:0]
			}
			out = append(out, p.b[start:p.i]...)
			if p.i+1 >= len(p.b) {
				return nil, false
			}
			e := p.b[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				if p.i+4 > len(p.b) {
					return nil, false
				}
				var r rune
				for _, h := range p.b[p.i : p.i+4] {
					switch {
					case h >= '0' && h <= '9':
						h -= '0'
					case h >= 'a' && h <= 'f':
						h -= 'a' - 10
					case h >= 'A' && h <= 'F':
						h -= 'A' - 10
					default:
						return nil, false
					}
					r = r<<4 | rune(h)
				}
				if utf16.IsSurrogate(r) {
					return nil, false
				}
				p.i += 4
				out = utf8.AppendRune(out, r)
			default:
				return nil, false
			}
			start, ascii = p.i, true
			continue
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	return nil, false
}

// str returns a string value; names are interned.
func (p *Parser) str(intern bool) (string, bool) {
	b, ok := p.raw()
	if !ok {
		return "", false
	}
	if !intern {
		return string(b), true
	}
	if s, ok := p.names[string(b)]; ok {
		return s, true
	}
	s := string(b)
	if p.names == nil {
		p.names = map[string]string{}
	}
	if len(p.names) < maxNames {
		p.names[s] = s
	}
	return s, true
}

// int reads a JSON integer (no fraction or exponent) that fits in 64 bits.
func (p *Parser) int() (int64, bool) {
	p.ws()
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	start := p.i
	var u uint64
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c < '0' || c > '9' {
			break
		}
		if u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 1 && p.b[start] == '0' || u > 1<<63 || !neg && u == 1<<63 {
		return 0, false
	}
	if p.i < len(p.b) {
		if c := p.b[p.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

func (p *Parser) bool() (bool, bool) {
	p.ws()
	rest := p.b[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.i += 5
		return false, true
	}
	return false, false
}

// object calls member for each key of a JSON object.
func (p *Parser) object(member func(key []byte) bool) bool {
	if !p.byte('{') {
		return false
	}
	if p.byte('}') {
		return true
	}
	for {
		k, ok := p.raw()
		if !ok || !p.byte(':') || !member(k) {
			return false
		}
		if p.byte(',') {
			continue
		}
		return p.byte('}')
	}
}

// seen marks key number k as read; a key given twice goes to
// encoding/json, whose rules for repeated keys (maps merged, slice elements
// reused) this scanner does not copy.
func seen(mask *uint32, k int) bool {
	if *mask&(1<<k) != 0 {
		return false
	}
	*mask |= 1 << k
	return true
}

// Keys of a record, numbered for seen.
const (
	kT = iota
	kW
	kPh
	kLabel
	kTx
	kDv
	kN
	kErr
	kSumUs
	kMinUs
	kMaxUs
	kSvcUs
	kSent
	kRecv
	kHist
	kErrs
	kUsers
	kDropped
)

// recordKey numbers a record's key; -1 for any other.
func recordKey(k []byte) int {
	switch string(k) {
	case "t":
		return kT
	case "w":
		return kW
	case "ph":
		return kPh
	case "label":
		return kLabel
	case "tx":
		return kTx
	case "dv":
		return kDv
	case "n":
		return kN
	case "err":
		return kErr
	case "sum_us":
		return kSumUs
	case "min_us":
		return kMinUs
	case "max_us":
		return kMaxUs
	case "svc_us":
		return kSvcUs
	case "sent":
		return kSent
	case "recv":
		return kRecv
	case "hist":
		return kHist
	case "errs":
		return kErrs
	case "users":
		return kUsers
	case "dropped":
		return kDropped
	}
	return -1
}

func (p *Parser) record(r *IntervalRecord) bool {
	var mask uint32
	ok := p.object(func(k []byte) bool {
		n := recordKey(k)
		if n < 0 || !seen(&mask, n) {
			return false // an unknown key, maybe another case of a known one: encoding/json decides
		}
		var ok bool
		switch n {
		case kT:
			r.T, ok = p.int()
		case kW:
			r.Workload, ok = p.str(true)
		case kPh:
			var v int64
			v, ok = p.int()
			r.Phase = int(v)
			ok = ok && int64(r.Phase) == v
		case kLabel:
			r.Label, ok = p.str(true)
		case kTx:
			r.Tx, ok = p.bool()
		case kDv:
			r.Derived, ok = p.bool()
		case kN:
			r.Count, ok = p.int()
		case kErr:
			r.Errors, ok = p.int()
		case kSumUs:
			r.SumUs, ok = p.int()
		case kMinUs:
			r.MinUs, ok = p.int()
		case kMaxUs:
			r.MaxUs, ok = p.int()
		case kSvcUs:
			r.SvcUs, ok = p.int()
		case kSent:
			r.Sent, ok = p.int()
		case kRecv:
			r.Recv, ok = p.int()
		case kHist:
			if p.HistText {
				// Not p.tmp: a later escaped string would overwrite it.
				var b []byte
				if b, ok = p.raw(); ok && p.escaped {
					b = append([]byte(nil), b...)
				}
				p.Hist = b
				break
			}
			r.Hist, ok = p.str(false)
		case kErrs:
			r.Errs, ok = p.errs()
		case kUsers:
			if r.Users == nil {
				r.Users = map[string]int{}
			}
			ok = p.object(func(k []byte) bool {
				v, ok := p.int()
				r.Users[p.name(k)] = int(v)
				return ok && int64(int(v)) == v
			})
		case kDropped:
			if r.Dropped == nil {
				r.Dropped = map[string]int64{}
			}
			ok = p.object(func(k []byte) bool {
				v, ok := p.int()
				r.Dropped[p.name(k)] = v
				return ok
			})
		}
		return ok
	})
	if !ok {
		return false
	}
	p.ws()
	return p.i == len(p.b)
}

// name interns a map key read by raw.
func (p *Parser) name(b []byte) string {
	if s, ok := p.names[string(b)]; ok {
		return s
	}
	return string(b)
}

func (p *Parser) errs() ([]ErrRecord, bool) {
	if !p.byte('[') {
		return nil, false
	}
	out := []ErrRecord{}
	if p.byte(']') {
		return out, true
	}
	for {
		var e ErrRecord
		var mask uint32
		ok := p.object(func(k []byte) bool {
			var ok bool
			switch string(k) {
			case "class":
				e.Class, ok = p.str(true)
				ok = ok && seen(&mask, 0)
			case "status":
				var v int64
				v, ok = p.int()
				e.Status = int(v)
				ok = ok && int64(e.Status) == v && seen(&mask, 1)
			case "msg":
				e.Message, ok = p.str(true)
				ok = ok && seen(&mask, 2)
			case "n":
				e.Count, ok = p.int()
				ok = ok && seen(&mask, 3)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
		out = append(out, e)
		if p.byte(',') {
			continue
		}
		return out, p.byte(']')
	}
}
