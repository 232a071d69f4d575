package k6

import (
	"bytes"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// FuzzDecodeCSV: any bytes after k6's CSV header decode without a panic,
// into no more samples than lines, none with a negative response time.
func FuzzDecodeCSV(f *testing.F) {
	const header = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"
	for _, s := range []string{
		"http_req_duration,1700000000,12.500000,,,,true,,GET,http://127.0.0.1:8080/items/17,HTTP/1.1,default,,200,,,http://127.0.0.1:8080/items/17,,\n",
		"http_req_duration,1700000001123456,30.000000,,,,false,,POST,\"pay, now\",HTTP/1.1,default,,503,,,http://127.0.0.1:8080/pay,,\n",
		"http_req_duration,2023-11-14T22:13:22.5Z,1.0,,\"a \"\"b\"\"\",1212,false,,GET,x,,,,0,,,x,,\n",
		"group_duration,1700000002,40.0,,,,,::shop,,,,default,,,,,,,\nvus,1700000002,3.0\nchecks,1,1,c\n",
		"\"unterminated,1,2\n,,,\n",
	} {
		f.Add([]byte(s))
	}
	cols, err := readCSVHeader([]byte(header + "x,1,1\n"))
	if err != nil {
		f.Fatal(err)
	}
	lbl := importer.NewLabels()
	tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{labels: lbl.NewCache(), tp: tp, host: "http://127.0.0.1:8080"}
		b := &batch{}
		d.decodeCSV(append([]byte(header), data...), 1, cols, b)
		lines := bytes.Count(data, []byte{'\n'}) + 1
		if len(b.recs)+len(b.vus) > lines {
			t.Fatalf("%d samples and %d vus points from %d lines", len(b.recs), len(b.vus), lines)
		}
		for _, r := range b.recs {
			if r.Elapsed < 0 {
				t.Fatalf("negative response time %d", r.Elapsed)
			}
		}
	})
}
