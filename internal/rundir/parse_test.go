package rundir

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// sameAsUnmarshal checks that ParseRecord gives what json.Unmarshal gives
// (value or error) and reports whether the scanner took the line itself.
func sameAsUnmarshal(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	var want, got IntervalRecord
	werr := json.Unmarshal(line, &want)
	var p Parser
	p.b = line
	fast = p.record(&got)
	if fast && werr != nil {
		t.Fatalf("the scanner took %q, which encoding/json refuses: %v", line, werr)
	}
	gerr := ParseRecord(line, &got)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("%q: error %v, encoding/json %v", line, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", line, got, want)
	}
	return fast
}

// TestParseRecordIsUnmarshal: every line AppendJSON writes without escapes
// is read by the scanner and gives json.Unmarshal's record; lines with
// escapes, other cases, floats, repeated keys and bad syntax give
// encoding/json's record or error.
func TestParseRecordIsUnmarshal(t *testing.T) {
	t.Parallel()
	for _, r := range []IntervalRecord{
		{},
		{T: -5, Phase: -1},
		{T: 1700000000, Workload: "w", Phase: 2, Label: "GET /a?b=c&d é", Tx: true, Derived: true, Count: 9, Errors: 3,
			SumUs: math.MaxInt64, MinUs: math.MinInt64, MaxUs: 1, SvcUs: -1, Sent: 7, Recv: 8,
			Errs: []ErrRecord{{Class: "http_5xx", Status: 503, Message: "Service Unavailable", Count: 2}, {Class: "timeout", Count: 1}},
			Hist: "HISTFAAAACR4nJNpmSzMwMDAxQABzFCaEUzKfPsIYQEAPkcDjA==", Users: map[string]int{"b": 2, "a": 1, "é": 3},
			Dropped: map[string]int64{"z": 1 << 40, "y": -1}},
		{Label: "x", Errs: []ErrRecord{}, Users: map[string]int{}, Dropped: map[string]int64{}},
	} {
		line := append(r.AppendJSON(nil), '\n')
		if !sameAsUnmarshal(t, line) {
			t.Errorf("the scanner left %s to encoding/json", line)
		}
	}
	for _, line := range []string{
		`{"t":1,"label":"a\"b"}`, `{"t":1,"label":"<\u003c>"}`, `{"T":1}`, `{"t":1.0}`, `{"t":1e3}`, `{"t":01}`,
		`{"t":9223372036854775807}`, `{"t":9223372036854775808}`, `{"t":-9223372036854775808}`, `{"t":-9223372036854775809}`,
		`{"t":null}`, `{"t":1,"t":2}`, `{"users":{"a":1},"users":{"b":2}}`, `{"errs":[{"class":"a","msg":"x"}],"errs":[{"class":"b"}]}`,
		`{"errs":[{"class":"a","class":"b"}]}`, `{"label":"\xff"}`, "{\"label\":\"a\x01\"}", `{"x":1}`, ` { "t" : 1 , "tx" : true } `,
		`{"t":1}{"t":2}`, `{"t":1`, `{"t":1,}`, `{"tx":1}`, `{"tx":tru}`, `{"n":-}`, `{"n":-0}`, `{"errs":[]}`, `{"errs":[,]}`,
		`{"users":{"a":1.5}}`, `{"users":{"a":"1"}}`, `{"users":{"a":1,"a":2}}`, `{}`, ``, `[]`, `{"hist":""}`, "{\"t\":1}\r\n",
	} {
		sameAsUnmarshal(t, []byte(line))
	}
}

// FuzzParseRecord holds the scanner to encoding/json on any line.
func FuzzParseRecord(f *testing.F) {
	r := IntervalRecord{T: 1700000000, Workload: "w", Phase: 2, Label: "GET /a", Tx: true, Count: 9, Errors: 1, SumUs: 5, MinUs: 1, MaxUs: 3,
		Errs: []ErrRecord{{Class: "http_5xx", Status: 503, Message: "m", Count: 1}}, Hist: "HISTFAAA", Users: map[string]int{"a": 1}, Dropped: map[string]int64{"a": 2}}
	f.Add(r.AppendJSON(nil))
	f.Add([]byte(`{"t":1,"label":"a\"b","users":{"a":1},"users":{"b":2}}`))
	f.Add([]byte(`{"t":-9223372036854775808,"ph":-1,"errs":[]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsUnmarshal(t, line)
	})
}

// TestParserHistText: with HistText the histogram's text comes out of the
// record, the same bytes encoding/json gives, whichever way the line is read;
// an escaped one is not overwritten by a later escaped string.
func TestParserHistText(t *testing.T) {
	t.Parallel()
	p := Parser{HistText: true}
	for _, line := range []string{
		`{"t":1,"label":"a","hist":"HISTFAAA+/="}`,
		`{"t":1,"hist":"HIST\/FAAA","label":"a\u0026b"}`, // escaped, then another escaped string
		`{"t":1,"hist":"HISTFAAA","T":2}`,                // encoding/json's way
		`{"t":1}`,
	} {
		var want, got IntervalRecord
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatal(err)
		}
		if err := p.Parse([]byte(line), &got); err != nil {
			t.Fatal(err)
		}
		if got.Hist != "" || string(p.Hist) != want.Hist {
			t.Fatalf("%s: record's hist %q, text %q, want %q", line, got.Hist, p.Hist, want.Hist)
		}
		want.Hist = ""
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s:\n got %#v\nwant %#v", line, got, want)
		}
	}
}
