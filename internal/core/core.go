// Package core holds plateau's shared vocabulary: samples, error classes,
// phases, monitor series and the per-label statistics row used by
// summary.json. It imports only the standard library so every other
// package can depend on it.
package core

import (
	"fmt"
	"time"
)

// ErrorClass says why a sample failed. Failures are data: they are counted by
// class, never by the text of an error.
type ErrorClass uint8

// Error classes, in the order the report lists them.
const (
	ErrNone     ErrorClass = iota // success
	ErrTimeout                    // connect or request deadline passed
	ErrRefused                    // connection refused
	ErrReset                      // connection reset or closed mid-exchange
	ErrDNS                        // name resolution failed
	ErrTLS                        // TLS handshake or certificate failure
	ErrCheck                      // response arrived but a check failed
	ErrHTTP4xx                    // status 400–499 with no explicit status check
	ErrHTTP5xx                    // status 500–599 with no explicit status check
	ErrProtocol                   // malformed HTTP response
	ErrOther                      // anything else (message kept)
	// ErrAborted: the request was sent but cut off in flight because the
	// run stopped (interrupt, graceful_stop reached, abort_on_fail); the
	// sample's time is how long it had run.
	ErrAborted
	// ErrH2StreamReset: an HTTP/2 server reset the request's stream
	// (RST_STREAM) while the connection stayed up.
	ErrH2StreamReset
	// gRPC status codes other than OK (see GRPCClass), in the order of
	// their numbers: CANCELLED (1) … UNAUTHENTICATED (16).
	ErrGRPCCanceled
	ErrGRPCUnknown
	ErrGRPCInvalidArgument
	ErrGRPCDeadlineExceeded
	ErrGRPCNotFound
	ErrGRPCAlreadyExists
	ErrGRPCPermissionDenied
	ErrGRPCResourceExhausted
	ErrGRPCFailedPrecondition
	ErrGRPCAborted
	ErrGRPCOutOfRange
	ErrGRPCUnimplemented
	ErrGRPCInternal
	ErrGRPCUnavailable
	ErrGRPCDataLoss
	ErrGRPCUnauthenticated
	// ErrWSClosed: a WebSocket connection ended abnormally (a close
	// status other than 1000 normal or 1001 going away, or the connection
	// lost without a close frame), or closed while a step still waited
	// for a message.
	ErrWSClosed
	// ErrWSTimeout: no WebSocket message matching the step's check
	// arrived within its timeout; the connection stays open.
	ErrWSTimeout
	numErrorClasses
)

var errorClassNames = [...]string{"", "timeout", "refused", "reset", "dns", "tls", "check", "http_4xx", "http_5xx", "protocol", "other", "aborted", "h2_stream_reset",
	"grpc_canceled", "grpc_unknown", "grpc_invalid_argument", "grpc_deadline_exceeded", "grpc_not_found",
	"grpc_already_exists", "grpc_permission_denied", "grpc_resource_exhausted", "grpc_failed_precondition",
	"grpc_aborted", "grpc_out_of_range", "grpc_unimplemented", "grpc_internal", "grpc_unavailable",
	"grpc_data_loss", "grpc_unauthenticated", "ws_closed", "ws_timeout"}

// String returns the stable lower-case name used in files and reports.
func (c ErrorClass) String() string {
	if int(c) < len(errorClassNames) {
		return errorClassNames[c]
	}
	return fmt.Sprintf("class(%d)", uint8(c))
}

// ErrorClasses lists every failure class (ErrNone excluded).
func ErrorClasses() []ErrorClass {
	out := make([]ErrorClass, 0, numErrorClasses-1)
	for c := ErrTimeout; c < numErrorClasses; c++ {
		out = append(out, c)
	}
	return out
}

// ParseErrorClass is the inverse of String. The empty string is ErrNone.
func ParseErrorClass(s string) (ErrorClass, bool) {
	for i, n := range errorClassNames {
		if n == s {
			return ErrorClass(i), true
		}
	}
	return ErrOther, false
}

// Sample is one measured request or transaction. Times are Unix nanoseconds so
// that a Sample is cheap to copy on the hot path. A Sample passed to a recorder
// is only borrowed: the recorder copies what it keeps.
type Sample struct {
	Label string
	// Intended is when the request should have been sent (open model: the
	// schedule; closed model: equal to Start). Latency counts from here so
	// coordinated omission does not hide queueing.
	Intended int64
	Start    int64 // actual send time
	// Elapsed is the response time from Intended to the last byte.
	Elapsed time.Duration
	// Service is the time from Start to the last byte (what the server cost).
	Service   time.Duration
	Connect   time.Duration // 0 when a kept-alive connection was reused
	TTFB      time.Duration // from Start to the first response byte
	BytesSent int64
	BytesRecv int64
	Status    int // HTTP status; 0 when no response arrived
	Class     ErrorClass
	Message   string // failure message; empty on success. Never holds secrets.
	Thread    string // virtual user name, as in JMeter's threadName
	URL       string // request URL with secrets redacted
	// GroupThreads and AllThreads are the active users in this workload and in
	// the whole run when the sample completed (JMeter's grpThreads/allThreads).
	GroupThreads int32
	AllThreads   int32
	// Transaction marks a parent sample that groups other samples.
	Transaction bool
}

// OK reports whether the sample succeeded.
func (s *Sample) OK() bool { return s.Class == ErrNone }

// Phase is a named span of a run: one load step, one workload's active time,
// or an imported iteration.
type Phase struct {
	Name     string        `json:"name"`
	Workload string        `json:"workload,omitempty"`
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
	Users    int           `json:"users,omitempty"`
	Rate     float64       `json:"rate_per_s,omitempty"`
	RampUp   time.Duration `json:"-"`
	// Stopped says why a phase ended early (stop rule, Ctrl-C, exhausted data).
	Stopped string `json:"stopped,omitempty"`
	// StopRule holds the stop rule's figures when it ended the phase, so a
	// report words them in its own language and number format; Stopped
	// keeps the English line for the console and older readers.
	StopRule *StopRule `json:"stop_rule,omitempty"`
}

// StopRule is a stepped load's stop rule firing: the phase's throughput
// gained GainPct over the previous step's, below ThresholdPct.
type StopRule struct {
	GainPct      float64 `json:"gain_pct"`
	ThresholdPct float64 `json:"threshold_pct"`
	FromRPS      float64 `json:"from_rps"`
	ToRPS        float64 `json:"to_rps"`
}

// Duration is End − Start.
func (p Phase) Duration() time.Duration { return p.End.Sub(p.Start) }

// Contains reports whether t lies in [Start, End).
func (p Phase) Contains(t time.Time) bool { return !t.Before(p.Start) && t.Before(p.End) }

// LabelStats is one row of the per-label tables and of summary.json's labels
// arrays. Times are milliseconds; throughput is requests per second over the
// span the row covers.
type LabelStats struct {
	Label       string `json:"label"`
	Transaction bool   `json:"transaction,omitempty"`
	// Derived marks a label computed from other samples (e.g. response time
	// net of downstream calls); it is not part of TOTAL.
	Derived       bool    `json:"derived,omitempty"`
	Samples       int64   `json:"samples"`
	Errors        int64   `json:"errors"`
	ErrorPct      float64 `json:"error_pct"`
	MeanMs        float64 `json:"mean_ms"`
	MinMs         float64 `json:"min_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P90Ms         float64 `json:"p90_ms"`
	P95Ms         float64 `json:"p95_ms"`
	P99Ms         float64 `json:"p99_ms"`
	MaxMs         float64 `json:"max_ms"`
	ThroughputRPS float64 `json:"throughput_rps"`
	// NoTimes marks a row whose samples have no response times (an
	// imported access log without a duration field): the time figures are
	// zero and mean "not in this log".
	NoTimes   bool  `json:"no_response_times,omitempty"`
	BytesRecv int64 `json:"bytes_received,omitempty"`
	BytesSent int64 `json:"bytes_sent,omitempty"`
}

// TotalLabel is the name of the all-labels row.
const TotalLabel = "TOTAL"

// Point is one monitor reading.
type Point struct {
	T time.Time
	V float64
}

// Series is one metric of one monitored target over time. A gap (target lost)
// is a point with V = NaN.
type Series struct {
	Target string
	Kind   string // host, process, cgroup, jvm, postgres, prometheus, or an import kind
	Metric string
	Unit   string
	Points []Point
}

// Key identifies a series as "target/metric".
func (s *Series) Key() string { return s.Target + "/" + s.Metric }

// Redact returns "***" for values that must never reach a report.
func Redact(string) string { return "***" }
