package jtl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// xmlFixtures were written by JMeter 5.6.3 running testdata/xml-plan.jmx
// (8 loops) against a loopback server with two result writers, one XML and
// one CSV; statistics.json is `jmeter -g results.csv`'s.
const xmlFixtures = "testdata/jmeter-5.6.3-xml"

// xmlNode is a DOM node: the slow, obviously right reading of an XML JTL
// the streaming decoder is checked against.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Nodes   []xmlNode  `xml:",any"`
}

func (n *xmlNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// oracleXMLElapsed returns the elapsed times per label of every sample
// element at any depth, and under "Total" those of the non-controller ones.
func oracleXMLElapsed(t *testing.T, path string) map[string][]float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root xmlNode
	if err := xml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	var walk func(n *xmlNode)
	walk = func(n *xmlNode) {
		for i := range n.Nodes {
			c := &n.Nodes[i]
			if c.XMLName.Local == "httpSample" || c.XMLName.Local == "sample" {
				el, err := strconv.ParseFloat(c.attr("t"), 64)
				if err != nil {
					t.Fatal(err)
				}
				out[c.attr("lb")] = append(out[c.attr("lb")], el)
				if !strings.HasPrefix(c.attr("rm"), controllerPrefix) {
					out["Total"] = append(out["Total"], el)
				}
				walk(c)
			}
		}
	}
	walk(&root)
	return out
}

func TestXMLMatchesJMeterDashboard(t *testing.T) {
	t.Parallel()
	path := filepath.Join(xmlFixtures, "results.xml")
	d, err := importFile(t, Config{Path: path}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compareWithDashboard(t, d, readStats(t, filepath.Join(xmlFixtures, "statistics.json")), oracleXMLElapsed(t, path))
	for k := range d.Run {
		if k.Tx != (k.Label == "checkout") {
			t.Errorf("label %q: transaction %v", k.Label, k.Tx)
		}
	}
	// Every failure keeps a message; assertion failures keep the
	// assertion's text, as the CSV's failureMessage column does.
	var check, http5 int64
	for _, e := range d.Errors {
		switch e.Class {
		case "check":
			check += e.Count
			if !strings.Contains(e.Message, "ok") {
				t.Errorf("assertion failure message %q", e.Message)
			}
		case "http_5xx":
			http5 += e.Count
		}
	}
	stats := readStats(t, filepath.Join(xmlFixtures, "statistics.json"))
	if check != stats["GET /text"].ErrorCount || http5 != stats["GET /flaky"].ErrorCount {
		t.Errorf("%d check and %d 5xx failures, JMeter %d on GET /text and %d on GET /flaky", check, http5,
			stats["GET /text"].ErrorCount, stats["GET /flaky"].ErrorCount)
	}
}

// TestXMLEqualsCSV imports the XML and the CSV JTL JMeter wrote of the same
// samples: every interval record must be the same, whether the XML is read
// by one token reader or cut into pieces decoded in parallel.
func TestXMLEqualsCSV(t *testing.T) {
	t.Parallel()
	read := func(cfg Config, workers int) []rundir.IntervalRecord {
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := importFile(t, cfg, importer.Options{Dir: dir, DerivePhases: true, MinPhase: 1, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		var out []rundir.IntervalRecord
		if err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
			out = append(out, *r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	c := read(Config{Path: filepath.Join(xmlFixtures, "results.csv")}, 0)
	// One token reader, and pieces decoded apart on three workers.
	for _, v := range []struct {
		workers, chunk int
	}{{1, 0}, {3, 2048}} {
		x := read(Config{Path: filepath.Join(xmlFixtures, "results.xml"), ChunkSize: v.chunk}, v.workers)
		if len(x) != len(c) || len(x) == 0 {
			t.Fatalf("%d records from XML (%d workers), %d from CSV", len(x), v.workers, len(c))
		}
		for i := range x {
			if !reflect.DeepEqual(x[i], c[i]) {
				t.Errorf("%d workers: record %d differs:\nxml %+v\ncsv %+v", v.workers, i, x[i], c[i])
			}
		}
	}
}

// TestXMLFlatTransactions reads the other XML fixture, written with the
// Transaction Controller not in parent mode (its sample follows its
// requests at the top level).
func TestXMLFlatTransactions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(fixtures, "results.xml")
	d, err := importFile(t, Config{Path: path}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := oracleXMLElapsed(t, path)
	if d.Total.Count != int64(len(want["Total"])) {
		t.Errorf("total %d, file has %d requests", d.Total.Count, len(want["Total"]))
	}
	if n := txCount(d); n != int64(len(want["checkout"])) || n == 0 {
		t.Errorf("%d transactions, file has %d", n, len(want["checkout"]))
	}
}

func TestXMLDamage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(xmlFixtures, "results.xml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	full := oracleXMLElapsed(t, filepath.Join(xmlFixtures, "results.xml"))
	// Find top-level samples to break: a plain request and a bad attribute.
	var plain, flaky int
	for i, l := range lines {
		if plain == 0 && i > 40 && strings.HasPrefix(l, `<httpSample `) && strings.Contains(l, `lb="GET /text"`) {
			plain = i
		}
		if flaky == 0 && i > 100 && strings.HasPrefix(l, `<httpSample `) && strings.Contains(l, `lb="GET /flaky"`) {
			flaky = i
		}
	}
	if plain == 0 || flaky == 0 {
		t.Fatal("fixture lacks the samples to damage")
	}
	mod := append([]string(nil), lines...)
	mod[plain] = strings.Replace(mod[plain], ` s="`, ` s=="`, 1) // syntax error inside a tag
	mod[flaky] = strings.Replace(mod[flaky], ` t="`, ` t="x`, 1) // a value that is not a number
	cases := []struct {
		name    string
		body    string
		lost    int      // samples that cannot be counted
		where   []string // file:line quoted in import.log
		noClose bool
	}{
		{"syntax-and-value", strings.Join(mod, ""), 2, []string{":" + strconv.Itoa(plain+1) + ":", ":" + strconv.Itoa(flaky+1) + ":"}, false},
		// JMeter killed mid-write: the file stops inside a transaction.
		{"truncated", strings.Join(lines[:plain+1], "") + lines[plain+1][:20], 1, []string{"truncated"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "damaged.xml")
			if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "run")
			d, err := importFile(t, Config{Path: p, ChunkSize: 4096}, importer.Options{Dir: dir, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.where {
				if !strings.Contains(string(log), w) {
					t.Errorf("import.log lacks %q:\n%s", w, log)
				}
			}
			if c.noClose != strings.Contains(string(log), "does not end with </testResults>") {
				t.Errorf("note on the missing </testResults>: want %v:\n%s", c.noClose, log)
			}
			if c.name == "syntax-and-value" {
				if got, want := d.Total.Count+txCount(d), int64(len(full["Total"])+len(full["checkout"])-c.lost); got != want {
					t.Errorf("%d samples, want %d (all but the %d damaged)", got, want, c.lost)
				}
			} else {
				// Every sample element complete before the cut is counted.
				oracle := oracleXMLElapsed(t, writeTemp(t, strings.Join(lines[:plain], "")+"</testResults>\n"))
				if got, want := d.Total.Count+txCount(d), int64(len(oracle["Total"])+len(oracle["checkout"])); got != want {
					t.Errorf("%d samples, want %d", got, want)
				}
			}
		})
	}
}

func writeTemp(t *testing.T, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.xml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestXMLRefusesOtherXML(t *testing.T) {
	t.Parallel()
	p := writeTemp(t, `<?xml version="1.0"?><jmeterTestPlan version="1.2"><hashTree/></jmeterTestPlan>`)
	_, err := importFile(t, Config{Path: p}, importer.Options{})
	if err == nil || !strings.Contains(err.Error(), "an XML file") || !strings.Contains(err.Error(), p) {
		t.Fatalf("error %v, want a refusal naming the file and what it is", err)
	}
}

func TestXMLLatin1(t *testing.T) {
	t.Parallel()
	body := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<testResults version=\"1.2\">\n" +
		"<sample t=\"12\" ts=\"1795309715116\" s=\"true\" lb=\"k\xf8b\" rc=\"200\" rm=\"OK\"/>\n</testResults>\n"
	d, err := importFile(t, Config{Path: writeTemp(t, body)}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Run[analysis.LabelKey{Workload: "jmeter", Label: "køb"}]; !ok {
		t.Errorf("labels %v, want køb", d.Labels())
	}
}

// FuzzXML decodes arbitrary bytes: never a panic, never a negative time,
// and no more samples than start tags.
func FuzzXML(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(xmlFixtures, "results.xml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[:min(len(b), 1200)])
	f.Add([]byte(`<testResults><sample t="1" ts="2" lb="a"><sample t="-1" ts="x"/></sample><httpSample t="5" ts="1795309715116" s="false" rc="500"><assertionResult><failureMessage>x</failureMessage></assertionResult></httpSample></testResults>`))
	f.Add([]byte("<testResults>\n<httpSample t=\"1\" ts=\"1\"\n<sample t=\"2\" ts=\"3\"/>\n<sample t"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, _ := importer.NewTimeParser("ms", importer.Clock{})
		var n int64
		d := &xmlDecoder{path: "f", cfg: &Config{}, tp: tp, labels: importer.NewLabels().NewCache(), keep: true,
			ctx: context.Background(), emit: func(r *importer.Rec) error {
				if r.Elapsed < 0 {
					t.Fatalf("negative elapsed accepted: %+v", r)
				}
				n++
				return nil
			}}
		d.probs.File = "f"
		_ = d.run(bufio.NewReader(bytes.NewReader(data)), 1)
		if tags := int64(bytes.Count(data, []byte("<sample")) + bytes.Count(data, []byte("<httpSample"))); n > tags {
			t.Fatalf("%d samples from %d start tags", n, tags)
		}
		_ = prettyPrinted(data)
		if k := cutXML(data); k < 0 || k > len(data) || k > 0 && (data[k-1] != '\n' || !sampleLine(data[k:])) {
			t.Fatalf("cut at %d", k)
		}
	})
}

// BenchmarkXMLDecode decodes the XML fixture repeated to about 16 MB, without
// writing a run (the token reader is the cost being measured).
func BenchmarkXMLDecode(b *testing.B) {
	src, err := os.ReadFile(filepath.Join(xmlFixtures, "results.xml"))
	if err != nil {
		b.Fatal(err)
	}
	s := string(src)
	body := s[strings.Index(s, "<testResults"):strings.LastIndex(s, "</testResults>")]
	body = body[strings.IndexByte(body, '>')+1:]
	var buf bytes.Buffer
	buf.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<testResults version=\"1.2\">\n")
	for buf.Len() < 16<<20 {
		buf.WriteString(body)
	}
	buf.WriteString("</testResults>\n")
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tp, _ := importer.NewTimeParser("ms", importer.Clock{})
		var n int64
		d := &xmlDecoder{path: "f", cfg: &Config{}, tp: tp, labels: importer.NewLabels().NewCache(), ctx: context.Background(),
			emit: func(r *importer.Rec) error { n++; return nil }}
		if err := d.run(bufio.NewReaderSize(bytes.NewReader(data), 1<<20), 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestXMLLayouts: a file in XStream's layout is cut at top-level sample
// lines; one on a single line, or with children at column 0, is read by one
// token reader; both count the same samples.
func TestXMLLayouts(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(xmlFixtures, "results.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !prettyPrinted(b) {
		t.Fatal("JMeter's own file not recognised as XStream's layout")
	}
	flat := []byte(strings.NewReplacer("\n", "", "  <", "<").Replace(string(b)))
	if prettyPrinted(flat) || prettyPrinted([]byte(strings.ReplaceAll(string(b), "\n  <", "\n<"))) {
		t.Error("a file with children at column 0 taken for XStream's layout")
	}
	if n := cutXML(b); n == 0 || !sampleLine(b[n:]) {
		t.Errorf("cut at %d: %q", n, b[n:min(len(b), n+20)])
	}
	want := oracleXMLElapsed(t, filepath.Join(xmlFixtures, "results.xml"))
	d, err := importFile(t, Config{Path: writeTemp(t, string(flat))}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Total.Count != int64(len(want["Total"])) {
		t.Errorf("one-line file: %d samples, want %d", d.Total.Count, len(want["Total"]))
	}
}
