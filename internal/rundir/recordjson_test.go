package rundir

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func sameAsMarshal(t *testing.T, r *IntervalRecord) {
	t.Helper()
	want, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON\n%s\njson.Marshal\n%s", got, want)
	}
}

// TestAppendJSONIsMarshal holds the hand-written encoder to encoding/json
// on records with every field set, none set, and strings that need
// escaping.
func TestAppendJSONIsMarshal(t *testing.T) {
	t.Parallel()
	for _, r := range []IntervalRecord{
		{},
		{T: -5, Phase: -1},
		{T: 1700000000, Workload: "w", Phase: 2, Label: "GET /a?b=<c>&d", Tx: true, Derived: true, Count: 9, Errors: 3,
			SumUs: math.MaxInt64, MinUs: math.MinInt64, MaxUs: 1, SvcUs: -1, Sent: 7, Recv: 8,
			Errs: []ErrRecord{{Class: "http_5xx", Status: 503, Message: "Service \"Unavailable\"\n\t\u2028\u2029\x00\x1f\x7f", Count: 2},
				{Class: "timeout", Count: 1}},
			Hist: "HISTFAAAACR4nJNpmSzMwMDAxQABzFCaEUzKfPsIYQEAPkcDjA==", Users: map[string]int{"b": 2, "a": 1, "é\xff": 3},
			Dropped: map[string]int64{"z": 1 << 40, "<": -1}},
		{Label: "bad \xff\xfe utf8 \xe2\x80", Errs: []ErrRecord{}, Users: map[string]int{}},
	} {
		sameAsMarshal(t, &r)
	}
}

// FuzzAppendJSON holds it to encoding/json for any strings and numbers.
func FuzzAppendJSON(f *testing.F) {
	f.Add("GET /x", "w", "msg", "key", int64(1), 0, true)
	f.Add("<&>\u2028\xff", "", "\"\\\b\f", "", int64(-1), -1, false)
	f.Fuzz(func(t *testing.T, label, workload, msg, key string, n int64, ph int, tx bool) {
		r := IntervalRecord{T: n, Workload: workload, Phase: ph, Label: label, Tx: tx, Count: n, Hist: label + msg,
			Errs: []ErrRecord{{Class: msg, Status: ph, Message: msg, Count: n}}, Users: map[string]int{key: ph, label: 1}}
		if n%2 == 0 {
			r.Errs, r.Users = nil, nil
			r.Dropped = map[string]int64{key: n}
		}
		sameAsMarshal(t, &r)
	})
}

// TestAppendJSONKnowsEveryField fails when a field is added to the records
// without AppendJSON learning it (and the records above setting it).
func TestAppendJSONKnowsEveryField(t *testing.T) {
	t.Parallel()
	if n := reflect.TypeFor[IntervalRecord]().NumField(); n != 18 {
		t.Errorf("IntervalRecord has %d fields, AppendJSON writes 18", n)
	}
	if n := reflect.TypeFor[ErrRecord]().NumField(); n != 4 {
		t.Errorf("ErrRecord has %d fields, AppendJSON writes 4", n)
	}
}
