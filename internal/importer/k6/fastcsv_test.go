package k6

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

const csvFixtures = "testdata/k6-v1.8.1-csv"

const csvHeader = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"

// checkFastCSV is the oracle: decodeCSVFast decodes data (a chunk that
// starts at line) into the same batch as decodeCSV, encoding/csv's reading
// — the same samples, users, tallies and problems — and says which line
// follows the chunk.
func checkFastCSV(t *testing.T, data []byte, line int64, cols *csvColumns) *batch {
	t.Helper()
	lbl := importer.NewLabels()
	tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
	host := cols.primaryHost(data)
	fast, slow := &batch{}, &batch{}
	fd := &decoder{labels: lbl.NewCache(), tp: tp, host: host}
	if next, want := fd.decodeCSVFast(data, line, cols, fast), line+int64(bytes.Count(data, []byte{'\n'})); next != want {
		t.Fatalf("%q: the next line is %d, want %d", data, next, want)
	}
	sd := &decoder{labels: lbl.NewCache(), tp: tp, host: host}
	sd.decodeCSV(data, line, cols, slow)
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q:\nfast        %+v\nencoding/csv %+v", data, *fast, *slow)
	}
	return fast
}

func gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFastCSVReal: the rows of real k6 CSV files — k6 v1.8.1 with
// nanosecond times (the executor's), and a public run with k6's default
// whole seconds — decode the same both ways, whole and cut into chunks.
func TestFastCSVReal(t *testing.T) {
	t.Parallel()
	for _, path := range []string{filepath.Join(csvFixtures, "out.csv.gz"), "testdata/public-finance/k6-results.csv.gz"} {
		data := gunzip(t, path)
		cols, err := readCSVHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		b := checkFastCSV(t, data, 1, cols)
		if b.requests < 60 || b.probs.Count != 0 {
			t.Errorf("%s: %d requests, %d problems", path, b.requests, b.probs.Count)
		}
		// A chunk from the middle: no header to skip.
		mid := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
		checkFastCSV(t, data[mid:], 1000, cols)
	}
}

// TestFastCSVEdges: quoted fields (the rest of the chunk goes to
// encoding/csv), CR LF line ends, short and blank rows, odd time stamps.
func TestFastCSVEdges(t *testing.T) {
	t.Parallel()
	cols, err := readCSVHeader([]byte(csvHeader + "x,1,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		"http_req_duration,1795920546412707129,4.125223,,,,true,::shop,GET,http://127.0.0.1:1/cart,HTTP/1.1,base,,200,,,http://127.0.0.1:1/cart,,\n",
		"http_req_duration,1700000000,12.5,,,,true,,GET,u,,,,200,,,u,,\r\nhttp_req_failed,1700000000,0.000000\r\n",
		"http_reqs,1700000000\nhttp_reqs\n\n \n\r\n\r\r\nvus,1700000000,3\nvus,9223372036854775807,1\nvus,9223372036854775808,1\n",
		"http_req_duration,1700000000,1,,,,false,,POST,\"pay, now\",,,,503,,,http://x/pay,,\nvus,1700000001,2\n",
		"vus,1700000001,2\nhttp_req_duration,1,1,,\"a \"\"b\"\"\",1212,false,,GET,x,,,,0,,,x,,\n",
		"http_req_duration,yesterday,1.0,,,,true,,GET,x\nhttp_req_duration,1,-1.0\nhttp_req_duration,1,NaN\nhttp_req_duration,1,x\nhttp_req_duration,+1,1\n",
		"checks,1700000002,1.000000,status is 200\nchecks,1700000002,0,status is 200\ngroup_duration,1700000002,40,,,,,::shop\niterations,1700000002,1\n",
		"http_req_duration,1700000000,1,,,,true,,GET,u,,,,200,,,u,,\r",
		"http_req_dur",
		// A request's rows decoded where they start (requestRow): equal
		// tags, other tags, CR LF and CR CR LF ends, a quote in a value,
		// a negative duration, odd times, the last row cut short.
		"http_req_duration,1700000000000000,1.500000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_failed,1700000000000000,0.000000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"iterations,1700000000000001,1.000000,,,,,,,,,,,,,,,,\n" +
			"http_req_duration,1700000000000002,2.500000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_failed,x,1.000000,,,,false,,GET,u,,,,500,,,u,,\n" +
			"http_req_duration,1700000000000003,-2.500000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_duration,17000000000000030000,2.5,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_failed,1,\"1\",,,,true,,GET,u,,,,200,,,u,,\n" +
			"iterations,1700000000000004,2147483648.000000,,\n" +
			"http_req_duration,1700000000000002,2.500000,,,,true,,GET,u,,,,200,,,u,,\r\r\n" +
			"http_req_duration,1700000000000002,2.500000,,,,true,,GET,u,,,,200,,,u,,\r\n" +
			"http_req_failed,1700000000000002,0.000000,,,,true,,GET,u,,,,200,,,u,,\r\n" +
			"http_req_duration,1700000000000002,2.500000,,,,true,,GET,u,,,,200,,,u,,",
		"iterations,1700000000000004,1.000000,\"a\nvus,1700000000000005,2\n\",,\nvus,1700000000000006,3\n",
	} {
		checkFastCSV(t, []byte(csvHeader+body), 1, cols)
		checkFastCSV(t, []byte(body), 7, cols)
	}
	// The URL last: a CR before a CR LF belongs to it (encoding/csv drops
	// only the CR of the CR LF), so a row whose tags equal the last
	// row's but for that CR has another URL.
	short := "metric_name,timestamp,metric_value,method,status,url\n"
	last, err := readCSVHeader([]byte(short + "x,1,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkFastCSV(t, []byte(short+"http_req_duration,1700000000000002,2.500000,GET,200,u\r\r\n"+
		"http_req_duration,1700000000000002,2.500000,GET,200,u\r\n"+
		"http_req_failed,1700000000000002,0.000000,GET,200,u\r\n"), 1, last)
	// The metric in another column than the first: every row is cut.
	other, err := readCSVHeader([]byte("timestamp,metric_value,metric_name,name\n1,2,vus\n"))
	if err != nil {
		t.Fatal(err)
	}
	checkFastCSV(t, []byte("timestamp,metric_value,metric_name,name\n1,2,vus\n1700000000,5,http_req_duration,n\n3,4\n1,1,iterations\n"), 1, other)
}

// FuzzDecodeCSVFast: whatever follows k6's header, the fast path decodes
// it as encoding/csv's reading does.
func FuzzDecodeCSVFast(f *testing.F) {
	for _, s := range []string{
		"http_req_duration,1795920546412707129,4.125223,,,,true,::shop,GET,http://127.0.0.1:8080/cart,HTTP/1.1,base,,200,,,http://127.0.0.1:8080/cart,,\n",
		"http_req_duration,1700000001123456,30.000000,,,,false,,POST,\"pay, now\",HTTP/1.1,default,,503,,,http://127.0.0.1:8080/pay,,\n",
		"group_duration,1700000002,40.0,,,,,::shop,,,,default,,,,,,,\nvus,1700000002,3.0\nchecks,1,1,c\r\n",
		"http_reqs,1\n\r\n \nhttp_req_failed,1,1\n",
		// Runs of equal tags, a row whose tags change, and one cut short.
		"http_req_duration,1795920546412707129,4.125223,,,,true,,GET,http://127.0.0.1:8080/cart,,,,200,,,http://127.0.0.1:8080/cart,,\n" +
			"http_req_duration,1795920546412707130,5.000000,,,,true,,GET,http://127.0.0.1:8080/cart,,,,200,,,http://127.0.0.1:8080/cart,,\n" +
			"http_req_duration,1795920546412707130,5.000000,,,,true,,GET,http://127.0.0.1:8080/cart,,,,201,,,http://127.0.0.1:8080/cart,,\n" +
			"checks,1795920546412707130,1.000000,,,,true,,GET,http://127.0.0.1:8080/cart,,,,200,,,http://127.0.0.1:8080/cart,,\n" +
			"http_req_duration,1795920546412707131,6.000000,,,,false,,GET,http://127.0.0.1:8080/cart,,,,500,,,http://127.0.0.1:8080/cart,,\n" +
			"http_req_duration,1795920546412707132,7.000000,,,,false,,GET,http://127.0.0.1:8080/cart\n" +
			"http_req_duration,1795920546412707133,8.000000,,,,false,,GET,http://127.0.0.1:8080/cart,,,,500,,,http://127.0.0.1:8080/cart,,\n",
		// A request's rows as the executor has k6 write them (requestRow).
		"http_req_duration,1700000000000000,1.500000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_blocked,1700000000000000,0.100000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"http_req_failed,1700000000000000,0.000000,,,,true,,GET,u,,,,200,,,u,,\n" +
			"data_sent,1700000000000001,71.000000,,,,,,,,,,,,,,,,\n" +
			"iterations,1700000000000001,1.000000,,,,,,,,,,,,,,,,\n" +
			"http_req_duration,1700000000000002,2.500000,,,,true,,GET,u,,,,200,,,u,,\r\r\n" +
			"http_req_failed,1700000000000002,1.000000,,,,true,,GET,u,,,,200,,,u,,\r\n",
	} {
		f.Add([]byte(s))
	}
	cols, err := readCSVHeader([]byte(csvHeader + "x,1,1\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastCSV(t, append([]byte(csvHeader), data...), 1, cols)
		checkFastCSV(t, data, 2, cols)
	})
}

// TestCSVFixtureMatchesSummary: the committed k6 v1.8.1 run written both
// ways imports from its nanosecond CSV with k6's own summary figures and
// every label's figures equal to the JSON stream's, rates included.
func TestCSVFixtureMatchesSummary(t *testing.T) {
	t.Parallel()
	sumPath := filepath.Join(csvFixtures, "summary.json")
	c, err := importStream(t, Config{Path: filepath.Join(csvFixtures, "out.csv.gz"), Summary: sumPath}, importer.Options{DerivePhases: true, MinPhase: 2e9})
	if err != nil {
		t.Fatal(err)
	}
	j, err := importStream(t, Config{Path: filepath.Join(csvFixtures, "out.json.gz"), Summary: sumPath}, importer.Options{DerivePhases: true, MinPhase: 2e9})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstSummary(t, c, s, readLines(t, filepath.Join(csvFixtures, "out.json.gz")))
	sameFigures(t, c, j, 0)
	if len(c.Phases) != len(j.Phases) || len(c.Phases) < 2 {
		t.Errorf("phases: CSV %+v, JSON %+v", c.Phases, j.Phases)
	}
}

// TestStreamHeadCSV: a followed CSV's head is whole once it holds a whole
// request row, not merely a row (k6's first flush may hold only its vus
// readings, and the host the labels drop is the first request's).
func TestStreamHeadCSV(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		head string
		want bool
	}{
		{csvHeader, false},
		{csvHeader + "vus,1795920546412707129,2.000000,,,,,,,,,,,,,,,,\n", false},
		{csvHeader + "vus,1,2\nhttp_req_duration,1,4.1,,,,true,,GET,http://127.0.0.1:1/cart", false},
		{csvHeader + "vus,1,2\nhttp_req_duration,1,4.1,,,,true,,GET,http://127.0.0.1:1/cart\n", true},
		{csvHeader + "http_reqs,1,1\nhttp_req_duration,1,4.1\n", true},
	} {
		if got := streamHead([]byte(c.head)); got != c.want {
			t.Errorf("%q: %v, want %v", c.head, got, c.want)
		}
	}
}
