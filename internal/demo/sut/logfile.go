package sut

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

// AccessLogFormat is the access-log line of front, back and external
// instances as an nginx-style log_format string; fields are separated by one
// space and never contain spaces. Variables:
//
//	$time_iso8601       when the response completed, RFC 3339 in UTC with
//	                    milliseconds (TimeLayout), e.g. 2019-05-13T11:10:14.123Z
//	$request_method     GET, POST, …
//	$uri                escaped path without the query string
//	$status             HTTP status sent
//	$request_time_ms    time from request to response in milliseconds with
//	                    three decimals (nginx's $request_time is seconds; this
//	                    is the same quantity × 1000)
//	$http_x_message_id  the X-Message-Id header (generated when absent)
//	$remote_addr        client IP address without port
//
// Health probes (GET /health) are not logged, so a log's line count is the
// service's traffic.
const AccessLogFormat = "$time_iso8601 $request_method $uri $status $request_time_ms $http_x_message_id $remote_addr"

// ExternalLogFormat is the front's external-call log line (the reference's
// "sla log"), one per call to an external service, in the same notation as
// AccessLogFormat:
//
//	$time_iso8601       when the call completed (TimeLayout)
//	$http_x_message_id  message id of the front request that made the call
//	$service            external service name: audit, consent or relation
//	$request_time_ms    call duration in milliseconds with three decimals
//	$outcome            the HTTP status received, or "timeout" or "error"
//	                    when no response arrived
const ExternalLogFormat = "$time_iso8601 $http_x_message_id $service $request_time_ms $outcome"

// TimeLayout is the time.Format layout of $time_iso8601 in both logs; times
// are always written in UTC, so the zone is "Z".
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// logFile is an append-only log with a buffered writer that a background
// goroutine flushes every interval, so a line is on disk at most one interval
// after it was written, and close flushes the rest. A nil *logFile discards
// everything, which is how an empty log path disables logging. Safe for
// concurrent use.
type logFile struct {
	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	scratch []byte // line buffer reused under mu
	err     error  // first write or flush error, returned by close

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// openLog opens path for appending (creating it) and starts the flusher.
// An empty path returns a nil *logFile that discards lines.
func openLog(path string, every time.Duration) (*logFile, error) {
	if path == "" {
		return nil, nil
	}
	if every <= 0 {
		every = defaultFlushInterval
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log: %w", err)
	}
	l := &logFile{
		f:       f,
		w:       bufio.NewWriterSize(f, 64<<10),
		scratch: make([]byte, 0, 256),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go l.flushLoop(every)
	return l, nil
}

func (l *logFile) flushLoop(every time.Duration) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			l.mu.Lock()
			if err := l.w.Flush(); err != nil && l.err == nil {
				l.err = err
			}
			l.mu.Unlock()
		}
	}
}

// line appends one line built by fill, which appends to the buffer it is
// given and returns it; the newline is added here.
func (l *logFile) line(fill func([]byte) []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.scratch = append(fill(l.scratch[:0]), '\n')
	if _, err := l.w.Write(l.scratch); err != nil && l.err == nil {
		l.err = err
	}
}

// close stops the flusher, flushes and closes the file. It is idempotent.
func (l *logFile) close() error {
	if l == nil {
		return nil
	}
	l.closeOnce.Do(func() {
		close(l.stop)
		<-l.done
		l.mu.Lock()
		defer l.mu.Unlock()
		err := l.err
		if ferr := l.w.Flush(); ferr != nil && err == nil {
			err = ferr
		}
		if cerr := l.f.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if err != nil {
			l.closeErr = fmt.Errorf("closing log %s: %w", l.f.Name(), err)
		}
	})
	return l.closeErr
}

// appendTime appends t in TimeLayout, UTC.
func appendTime(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, TimeLayout)
}

// appendMillis appends d in milliseconds with three decimals.
func appendMillis(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d)/float64(time.Millisecond), 'f', 3, 64)
}

// orDash returns s, or "-" for an empty field as nginx writes it.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// statusWriter records the status a handler sends.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// withAccessLog wraps h so that every request except health probes gets a
// message id (kept from the X-Message-Id header or generated, visible to h in
// the request header and echoed in the response) and one AccessLogFormat line
// in log when it completes.
func withAccessLog(log *logFile, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		id := messageID(r)
		r.Header.Set(MessageIDHeader, id)
		w.Header().Set(MessageIDHeader, id)
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		end := time.Now()
		status := sw.status
		if status == 0 {
			status = http.StatusOK // handler wrote nothing: net/http sends 200
		}
		remote, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			remote = r.RemoteAddr
		}
		log.line(func(b []byte) []byte {
			b = appendTime(b, end)
			b = append(b, ' ')
			b = append(b, r.Method...)
			b = append(b, ' ')
			b = append(b, orDash(r.URL.EscapedPath())...)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(status), 10)
			b = append(b, ' ')
			b = appendMillis(b, end.Sub(start))
			b = append(b, ' ')
			b = append(b, id...)
			b = append(b, ' ')
			b = append(b, orDash(remote)...)
			return b
		})
	})
}
