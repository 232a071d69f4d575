package k6

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// checkFast is the oracle: where fastPoint decodes a line, encoding/json
// decodes it to the same point; where encoding/json fails, fastPoint does
// not accept the line.
func checkFast(t *testing.T, line []byte) bool {
	t.Helper()
	var fp point
	var v float64
	ok := fastPoint(line, &fp, &v, true)
	var jp point
	err := json.Unmarshal(line, &jp)
	// Without the tags: the same but the tags, on the lines taken with them.
	var np point
	var nv float64
	if fastPoint(line, &np, &nv, false) && ok {
		np.Data.Value, np.Data.Tags = nil, fp.Data.Tags
		if fcopy := fp; nv != v || !reflect.DeepEqual(np, func() point { fcopy.Data.Value = nil; return fcopy }()) {
			t.Fatalf("%q: without tags %+v %v, with %+v %v", line, np, nv, fp, v)
		}
	}
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("fastPoint accepted %q, encoding/json: %v", line, err)
	}
	if jp.Data.Value == nil || (*jp.Data.Value != v && !(math.IsNaN(v) && math.IsNaN(*jp.Data.Value))) {
		t.Fatalf("%q: value %v, encoding/json %v", line, v, jp.Data.Value)
	}
	if string(fp.rawTime) != jp.Data.Time || fp.Data.Time != "" {
		t.Fatalf("%q: time %q (%q), encoding/json %q", line, fp.rawTime, fp.Data.Time, jp.Data.Time)
	}
	fp.Data.Value, jp.Data.Value, fp.rawTime, jp.Data.Time = nil, nil, nil, ""
	if !reflect.DeepEqual(fp, jp) {
		t.Fatalf("%q:\nfastPoint     %+v\nencoding/json %+v", line, fp, jp)
	}
	return true
}

// TestFastPointReal: every Point line of a real k6 stream decodes the
// same both ways, and the fast way takes them all.
func TestFastPointReal(t *testing.T) {
	t.Parallel()
	data := fixtureStream(t)
	var points, fast int
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if !bytes.Contains(line, []byte(`"type":"Point"`)) {
			continue
		}
		points++
		if checkFast(t, line) {
			fast++
		}
	}
	if points < 1000 || fast != points {
		t.Errorf("%d of %d Point lines decoded by fastPoint", fast, points)
	}
}

func TestFastPointEdges(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		fast bool
	}{
		{`{"metric":"vus","type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":3,"tags":null}}`, true},
		{`{"metric":"vus","type":"Point","data":{"time":"2026-01-01T00:00:00Z","value":3,"tags":{}}}`, true},
		{`{"metric":"x","type":"Point","data":{"time":"t","value":-0.5e-3,"tags":{"Status":"200","name":"é"}}}`, true},
		{`{"metric":"x","type":"Point","data":{"time":"t","value":1,"tags":{"name":"a\"b"}}}`, false},         // an escape
		{`{"metric":"x","type":"Point","data":{"time":"t","value":01,"tags":{}}}`, false},                     // not JSON
		{`{"metric":"x","type":"Point","data":{"time":"t","value":1e999,"tags":{}}}`, false},                  // out of range
		{`{"metric":"x","type":"Point","data":{"time":"t","value":1,"tags":{"status":200}}}`, false},          // not a string
		{`{"metric":"x","type":"Point","data":{"time":"t","value":1,"tags":{},"metadata":{"a":"b"}}}`, false}, // metadata: encoding/json
		{`{"metric":"x","type":"Point","data":{"time":"t","value":1,"tags":{}}}}`, false},
		{"{\"metric\":\"x\",\"type\":\"Point\",\"data\":{\"time\":\"t\",\"value\":1,\"tags\":{\"name\":\"\xff\"}}}", false},
	} {
		if got := checkFast(t, []byte(c.line)); got != c.fast {
			t.Errorf("%s: fast %v, want %v", c.line, got, c.fast)
		}
	}
}

// FuzzFastPoint: whatever the line, fastPoint never disagrees with
// encoding/json.
func FuzzFastPoint(f *testing.F) {
	f.Add([]byte(`{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-28T23:59:38.947906462Z","value":14.920263,"tags":{"expected_response":"true","group":"","method":"GET","name":"http://127.0.0.1:18099/","proto":"HTTP/1.1","scenario":"default","status":"200","url":"http://127.0.0.1:18099/"}}}`))
	f.Add([]byte(`{"metric":"vus","type":"Point","data":{"time":"t","value":3,"tags":null}}`))
	f.Add([]byte(`{"metric":"x","type":"Point","data":{"time":"t","value":-1.5E+2,"tags":{"ſtatus":"1","NAME":"n"}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFast(t, line)
	})
}
