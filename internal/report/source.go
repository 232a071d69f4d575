package report

import "github.com/plateau-perf/plateau/internal/rundir"

// source is where the run's samples came from (run.json source_kind, or
// what an older run.json implies): the method sentences depend on it
// (what a "response time" measured differs by tool).
func (b *builder) source() rundir.SourceKind {
	k, _ := b.d.Info.Origin()
	return k
}

// holds is what the run's data holds; a section states nothing its data
// lacks.
func (b *builder) holds() rundir.Holds {
	_, h := b.d.Info.Origin()
	return h
}

// timingMethod is the sentence saying what a response time measured, for
// the run's source.
func (b *builder) timingMethod() string {
	switch b.source() {
	case rundir.SourceLive, rundir.SourceMerged:
		return b.W("Times are from the intended send time to the last byte, in milliseconds, so a late start counts as waiting (coordinated omission corrected)")
	case rundir.SourceJMeter:
		return b.W("Times are JMeter's elapsed times as the JTL recorded them: from just before the request was sent to the last byte of the response, in milliseconds; JMeter does not correct for late starts")
	case rundir.SourceK6:
		return b.W("Times are k6's http_req_duration: sending, waiting and receiving, without connection setup, in milliseconds; k6 does not correct for late starts")
	case rundir.SourceGatling:
		return b.W("Times are Gatling's response times as its simulation.log recorded them: from the request's start to the end of its response, in milliseconds")
	case rundir.SourceLocust:
		return b.W("Times are Locust's response times, from sending the request to the response read, in milliseconds, rebuilt from Locust's CSV statistics")
	case rundir.SourceAccessLog:
		if !b.holds().Durations {
			return b.W("The access log records no request times: response times were not measured, only requests, statuses and sizes")
		}
		return b.W("Times are the servers' own request times from the access log, in milliseconds: from the request read to the response written, without any wait in front of the server")
	}
	return b.W("Times are as the imported files recorded them, in milliseconds")
}
