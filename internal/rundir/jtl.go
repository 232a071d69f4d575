package rundir

import (
	"net/http"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// JTLHeader is the header of samples.jtl: JMeter's default CSV JTL columns in
// their order, plus serviceTime (ms from the actual send, where elapsed counts
// from the intended send time). JMeter reads extra trailing columns as sample
// variables, so its tooling accepts the file.
const JTLHeader = "timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success," +
	"failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect,serviceTime\n"

// AppendJTL appends one sample as a JTL line. timeStamp is the intended start
// in epoch ms; elapsed, Latency (time to first byte), Connect and serviceTime
// are whole milliseconds as JMeter writes them.
func AppendJTL(b []byte, s *core.Sample) []byte {
	b = strconv.AppendInt(b, s.Intended/int64(time.Millisecond), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.Elapsed.Milliseconds(), 10)
	b = append(b, ',')
	b = appendCSV(b, s.Label)
	b = append(b, ',')
	switch {
	case s.Status > 0:
		b = strconv.AppendInt(b, int64(s.Status), 10)
	default:
		b = appendCSV(b, s.Class.String())
	}
	b = append(b, ',')
	switch {
	case s.Transaction:
		b = appendCSV(b, "transaction")
	case s.Status > 0:
		b = appendCSV(b, http.StatusText(s.Status))
	}
	b = append(b, ',')
	b = appendCSV(b, s.Thread)
	b = append(b, ',')
	if !s.Transaction {
		b = append(b, "text"...)
	}
	b = append(b, ',')
	if s.OK() {
		b = append(b, "true,"...)
	} else {
		b = append(b, "false,"...)
		b = appendCSV(b, s.Message)
	}
	b = append(b, ',')
	b = strconv.AppendInt(b, s.BytesRecv, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.BytesSent, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.GroupThreads), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(s.AllThreads), 10)
	b = append(b, ',')
	b = appendCSV(b, s.URL)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.TTFB.Milliseconds(), 10)
	b = append(b, ",0,"...)
	b = strconv.AppendInt(b, s.Connect.Milliseconds(), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, s.Service.Milliseconds(), 10)
	return append(b, '\n')
}

// appendCSV appends a field, quoting it only when needed (RFC 4180).
func appendCSV(b []byte, f string) []byte {
	quote := false
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case ',', '"', '\n', '\r':
			quote = true
		}
	}
	if !quote {
		return append(b, f...)
	}
	b = append(b, '"')
	for i := 0; i < len(f); i++ {
		if f[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, f[i])
	}
	return append(b, '"')
}
