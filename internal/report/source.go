package report

import "strings"

// dataSource says where a run's samples came from; the method sentences
// depend on it (what a "response time" measured differs by tool).
type dataSource int

const (
	sourceEngine    dataSource = iota // plateau's own load generator
	sourceJMeter                      // an imported JMeter JTL
	sourceK6                          // an imported k6 JSON stream
	sourceLocust                      // imported Locust CSV statistics
	sourceAccessLog                   // an imported server access log
	sourceMixed                       // several request sources, or an unknown one
)

// source classifies the run's request samples by the importers'
// descriptions in run.json (importer.Source.Describe); a run made by the
// engine has none. System-statistics sources (vmstat, jstat, docker stats)
// carry no requests and are ignored.
func (b *builder) source() dataSource {
	found := sourceEngine
	for _, s := range b.d.Info.Source {
		var k dataSource
		switch {
		case strings.HasPrefix(s, "JMeter JTL"):
			k = sourceJMeter
		case strings.HasPrefix(s, "k6 "):
			k = sourceK6
		case strings.HasPrefix(s, "Locust"):
			k = sourceLocust
		case strings.HasPrefix(s, "access log"), strings.HasPrefix(s, "external-call log"):
			k = sourceAccessLog
		case strings.HasPrefix(s, "vmstat"), strings.HasPrefix(s, "jstat"), strings.HasPrefix(s, "docker stats"):
			continue
		default:
			k = sourceMixed
		}
		if found != sourceEngine && found != k {
			return sourceMixed
		}
		found = k
	}
	if found == sourceEngine && b.d.Info.Status == "imported" {
		return sourceMixed
	}
	return found
}

// timingMethod is the sentence saying what a response time measured, for
// the run's source.
func (b *builder) timingMethod() string {
	switch b.source() {
	case sourceEngine:
		return "Times are from the intended send time to the last byte, in milliseconds, so a late start counts as waiting (coordinated omission corrected)"
	case sourceJMeter:
		return "Times are JMeter's elapsed times as the JTL recorded them: from just before the request was sent to the last byte of the response, in milliseconds; JMeter does not correct for late starts"
	case sourceK6:
		return "Times are k6's http_req_duration: sending, waiting and receiving, without connection setup, in milliseconds; k6 does not correct for late starts"
	case sourceLocust:
		return "Times are Locust's response times, from sending the request to the response read, in milliseconds, rebuilt from Locust's CSV statistics"
	case sourceAccessLog:
		return "Times are the servers' own request times from the access log, in milliseconds: from the request read to the response written, without any wait in front of the server"
	}
	return "Times are as the imported files recorded them, in milliseconds"
}
