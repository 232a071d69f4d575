package importer

import (
	"bytes"
	"fmt"
)

// Sniff names what the first bytes of a file look like ("a k6 JSON stream",
// "an XML JTL", …) so that a decoder given the wrong kind of file can refuse
// it with a message that says what it got. It returns "" when it cannot
// tell.
func Sniff(head []byte) string {
	b := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	switch {
	case len(b) == 0:
		return "an empty file"
	case bytes.HasPrefix(line, []byte("RUN\t")) || bytes.HasPrefix(line, []byte("ASSERTION\t")) ||
		(bytes.HasPrefix(line, []byte("USER\t")) || bytes.HasPrefix(line, []byte("REQUEST\t"))) && bytes.Count(line, []byte{'\t'}) >= 3:
		return "a Gatling simulation.log"
	case gatlingBinary(head):
		return "a binary Gatling simulation.log (Gatling 3.12 or later)"
	case bytes.HasPrefix(line, []byte("metric_name,timestamp,metric_value")):
		return "a k6 CSV output (--out csv)"
	case bytes.HasPrefix(b, []byte("{")) && bytes.Contains(b, []byte(`"numberOfRequests"`)) && bytes.Contains(b, []byte(`"meanResponseTime"`)):
		return "a Gatling report's statistics (js/stats.json or global_stats.json)"
	case bytes.HasPrefix(b, []byte("var stats =")) || bytes.HasPrefix(b, []byte("var stats=")):
		return "a Gatling report's statistics (js/stats.json or global_stats.json)"
	case bytes.HasPrefix(b, []byte("<?xml")) || bytes.HasPrefix(b, []byte("<testResults")):
		if bytes.Contains(b, []byte("<testResults")) {
			return "a JMeter XML JTL"
		}
		return "an XML file"
	case bytes.HasPrefix(b, []byte(`{"type":"Metric"`)) || bytes.HasPrefix(b, []byte(`{"metric":`)) ||
		bytes.HasPrefix(b, []byte(`{"type":"Point"`)):
		return "a k6 JSON output stream (--out json)"
	case bytes.HasPrefix(b, []byte("{")) && bytes.Contains(b, []byte(`"metrics"`)) && bytes.Contains(b, []byte(`"http_req_duration"`)):
		return "a k6 summary export (--summary-export)"
	case bytes.HasPrefix(b, []byte("{")) && bytes.Contains(line, []byte(`"cpu_stats"`)):
		return "a Docker Engine API stats stream"
	case bytes.HasPrefix(b, []byte("{")) || bytes.HasPrefix(b, []byte("[")):
		return "a JSON file"
	case bytes.HasPrefix(line, []byte("Type,Name,Request Count")) || bytes.HasPrefix(line, []byte(`"Type","Name","Request Count"`)):
		return "a Locust --csv stats file"
	case bytes.HasPrefix(line, []byte("Timestamp,User Count,Type,Name")) || bytes.HasPrefix(line, []byte(`"Timestamp","User Count"`)):
		return "a Locust --csv stats history file"
	case bytes.Contains(line, []byte("timeStamp")) && bytes.Contains(line, []byte("elapsed")):
		return "a JMeter CSV JTL"
	case bytes.HasPrefix(line, []byte("procs ")) || bytes.HasPrefix(line, []byte("r  b ")) && bytes.Contains(line, []byte(" us sy id")):
		return "vmstat output"
	case bytes.Contains(line, []byte("S0C")) || bytes.Contains(line, []byte("S0 ")) && bytes.Contains(line, []byte("YGC")) ||
		bytes.Contains(line, []byte("NGCMN")) || bytes.HasPrefix(bytes.TrimSpace(line), []byte("Timestamp")) && bytes.Contains(line, []byte("GC")):
		return "jstat output"
	case bytes.Contains(line, []byte("CONTAINER")) && bytes.Contains(line, []byte("CPU %")):
		return "docker stats table output"
	case bytes.Contains(line, []byte("http_reqs")) || bytes.Contains(line, []byte("✓")) || bytes.Contains(line, []byte("/\\      |‾‾|")):
		return "k6 console output"
	case bytes.Contains(line, []byte(`HTTP/1.`)) && bytes.Contains(line, []byte(`] "`)):
		return "a web server access log"
	}
	return ""
}

// gatlingBinary tells the binary simulation.log of Gatling 3.12+: it
// starts with the run record's header byte (0) and holds the Gatling
// version and the simulation's class name as length-prefixed strings.
func gatlingBinary(head []byte) bool {
	if len(head) < 16 || head[0] != 0 {
		return false
	}
	h := head[:min(len(head), 512)]
	return bytes.Contains(h, []byte("Simulation")) || bytes.Contains(h, []byte("simulation")) ||
		bytes.Contains(h, []byte("io.gatling"))
}

// Refuse builds the error for a file that is not what its source type
// expects: it names the file, what was expected, what it looks like, and
// which source type reads it when Sniff knows.
func Refuse(path, want string, head []byte) error {
	got := Sniff(head)
	hint := ""
	switch got {
	case "a JMeter CSV JTL", "a JMeter XML JTL":
		hint = "; import it with `plateau import jmeter`"
	case "a k6 JSON output stream (--out json)", "a k6 summary export (--summary-export)", "a k6 CSV output (--out csv)":
		hint = "; import it with `plateau import k6`"
	case "a Gatling simulation.log":
		hint = "; import it with `plateau import gatling`"
	case "a binary Gatling simulation.log (Gatling 3.12 or later)":
		hint = "; plateau reads the text simulation.log of Gatling 2.x–3.11, not yet this binary one"
	case "a Gatling report's statistics (js/stats.json or global_stats.json)":
		hint = "; they are whole-run figures only: import the run's simulation.log with `plateau import gatling`"
	case "a Locust --csv stats file", "a Locust --csv stats history file":
		hint = "; import it with `plateau import locust`"
	case "vmstat output":
		hint = "; import it with `plateau import vmstat`"
	case "jstat output":
		hint = "; import it with `plateau import jstat`"
	case "docker stats table output", "a Docker Engine API stats stream":
		hint = "; import it with `plateau import dockerstats`"
	case "a web server access log":
		hint = "; import it with `plateau import accesslog`"
	}
	if got == "" {
		first, _, _ := bytes.Cut(head, []byte{'\n'})
		return fmt.Errorf("%s is not %s (first line %q)", path, want, Quote(first))
	}
	return fmt.Errorf("%s is not %s: it looks like %s%s", path, want, got, hint)
}
