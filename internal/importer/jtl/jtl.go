// Package jtl imports JMeter results: CSV JTL files with a header line (any
// column subset and order JMeter's save-service settings produce, any
// single-byte delimiter) and XML JTL files. Transaction Controller samples
// become transaction labels, as JMeter's dashboard treats them: counted per
// label, left out of the total. CSV files are decoded in parallel chunks, so
// an import uses every core it is given and memory that does not depend on
// the file's size.
package jtl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one JTL file.
type Config struct {
	// Path is the file.
	Path string
	// Workload names the samples' workload (default "jmeter").
	Workload string
	// Delimiter is the CSV delimiter; 0 detects it from the header.
	Delimiter byte
	// Columns is the header to use for a file written without one
	// (jmeter.save.saveservice.print_field_names=false), in the file's
	// delimiter or commas.
	Columns string
	// TimeFormat is the timeStamp format: "" detects epoch milliseconds,
	// otherwise see importer.NewTimeParser (a Java SimpleDateFormat pattern
	// as in jmeter.save.saveservice.timestamp_format is accepted).
	TimeFormat string
	// TimestampEnd says timeStamp is the sample's end time, as JMeter writes
	// it with sampleresult.timestamp.start=false (the shipped
	// jmeter.properties sets true: timeStamp is the start).
	TimestampEnd bool
	// ChunkSize overrides the size of the pieces a file is cut into (tests).
	ChunkSize int
	// Follow, when set, makes the import follow the file while JMeter is
	// still writing it, until Follow is closed (JMeter has exited): the
	// samples reach the run as they are written (importer.Follower).
	Follow <-chan struct{}
}

// Source imports one JTL file.
type Source struct {
	cfg       Config
	perSample bool // aggregate sample by sample on one goroutine (tests: the reference)
	// chunks merged as partial aggregates, and added sample by sample
	// because a sample came too late (tests)
	merged, redone int
}

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Workload == "" {
		cfg.Workload = "jmeter"
	}
	return &Source{cfg: cfg}
}

// Describe says what the source is.
func (s *Source) Describe() string { return "JMeter JTL " + s.cfg.Path }

var _ importer.Source = (*Source)(nil)

// Import reads the file into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	var f io.ReadCloser
	var err error
	if s.cfg.Follow != nil {
		// The header and a first sample make the head (layout, clock).
		f, err = importer.Follow(s.cfg.Path, s.cfg.Follow, importer.Lines(2))
	} else {
		f, err = os.Open(s.cfg.Path)
	}
	if err != nil {
		return fmt.Errorf("opening JTL: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(64 << 10)
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte("<")) {
		if importer.Sniff(head) != "a JMeter XML JTL" {
			return importer.Refuse(s.cfg.Path, "a JMeter JTL (CSV or XML)", head)
		}
		run.AddSource(s.Describe() + " (XML)")
		run.SetOrigin(rundir.SourceJMeter, rundir.HoldsOf(rundir.SourceJMeter))
		return s.importXML(ctx, run, importer.NoPause(br))
	}
	run.AddSource(s.Describe() + " (CSV)")
	run.SetOrigin(rundir.SourceJMeter, rundir.HoldsOf(rundir.SourceJMeter))
	// The rest is read straight from the file: through br, every piece
	// smaller than br's buffer would be copied once more.
	rest, _ := br.Peek(br.Buffered())
	return s.importCSV(ctx, run, io.MultiReader(bytes.NewReader(rest), f), head)
}

// Column names JMeter writes (CSVSaveService), lower-cased for matching.
const (
	colTimeStamp = iota
	colElapsed
	colLabel
	colResponseCode
	colResponseMessage
	colThreadName
	colDataType
	colSuccess
	colFailureMessage
	colBytes
	colSentBytes
	colGrpThreads
	colAllThreads
	colURL
	colLatency
	colConnect
	numCols
)

var colNames = map[string]int{
	"timestamp": colTimeStamp, "elapsed": colElapsed, "label": colLabel, "responsecode": colResponseCode,
	"responsemessage": colResponseMessage, "threadname": colThreadName, "datatype": colDataType,
	"success": colSuccess, "failuremessage": colFailureMessage, "bytes": colBytes, "sentbytes": colSentBytes,
	"grpthreads": colGrpThreads, "allthreads": colAllThreads, "url": colURL, "latency": colLatency,
	"connect": colConnect,
}

// otherJMeterCols are columns JMeter may write that the import does not
// need; they count as known when detecting the delimiter.
var otherJMeterCols = []string{"filename", "encoding", "samplecount", "errorcount", "hostname", "idletime"}

func knownCol(name string) bool {
	n := strings.ToLower(strings.TrimSpace(strings.Trim(name, `"`)))
	if _, ok := colNames[n]; ok {
		return true
	}
	for _, o := range otherJMeterCols {
		if n == o {
			return true
		}
	}
	return false
}

// detectDelimiter picks the byte that splits the header into the most JMeter
// column names.
func detectDelimiter(header []byte) (byte, int) {
	best, bestN := byte(','), 0
	for _, d := range []byte{',', ';', '\t', '|', ' '} {
		n := 0
		for _, f := range bytes.Split(header, []byte{d}) {
			if knownCol(string(f)) {
				n++
			}
		}
		if n > bestN {
			best, bestN = d, n
		}
	}
	return best, bestN
}

// layout is the column layout of one CSV JTL.
type layout struct {
	delim  byte
	idx    [numCols]int // field index of each known column, −1 when absent
	fields int          // fields per line
	header []byte       // the header line as written, to skip repeats
}

func parseHeader(line []byte, delim byte) (layout, int) {
	l := layout{delim: delim, header: append([]byte(nil), line...)}
	for i := range l.idx {
		l.idx[i] = -1
	}
	known := 0
	fields := bytes.Split(line, []byte{delim})
	l.fields = len(fields)
	for i, f := range fields {
		n := strings.ToLower(strings.TrimSpace(strings.Trim(string(f), `"`)))
		if c, ok := colNames[n]; ok && l.idx[c] < 0 {
			l.idx[c] = i
			known++
		} else if knownCol(n) {
			known++
		}
	}
	return l, known
}

func (s *Source) layoutOf(head []byte) (layout, bool, error) {
	first, _, _ := bytes.Cut(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), []byte{'\n'})
	first = bytes.TrimSuffix(first, []byte{'\r'})
	if s.cfg.Columns != "" {
		d := s.cfg.Delimiter
		if d == 0 {
			d, _ = detectDelimiter([]byte(s.cfg.Columns))
		}
		cols := []byte(strings.ReplaceAll(s.cfg.Columns, ",", string(d)))
		l, _ := parseHeader(cols, d)
		if l.idx[colTimeStamp] < 0 || l.idx[colElapsed] < 0 {
			return l, false, fmt.Errorf("--columns %q lacks timeStamp or elapsed", s.cfg.Columns)
		}
		// The file may still carry a header line: skip it when it matches.
		hasHeader := bytes.Equal(first, cols) || bytes.Equal(first, []byte(s.cfg.Columns))
		return l, hasHeader, nil
	}
	d := s.cfg.Delimiter
	n := 0
	if d == 0 {
		d, n = detectDelimiter(first)
	}
	l, n2 := parseHeader(first, d)
	n = max(n, n2)
	if l.idx[colTimeStamp] < 0 || l.idx[colElapsed] < 0 {
		if len(first) > 0 && first[0] >= '0' && first[0] <= '9' && bytes.Count(first, []byte{d}) >= 2 {
			return l, false, fmt.Errorf("%s has no header line (JMeter wrote it with jmeter.save.saveservice.print_field_names=false); give --columns with the header JMeter would write, e.g. --columns timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect", s.cfg.Path)
		}
		return l, false, importer.Refuse(s.cfg.Path, "a JMeter CSV JTL (header with timeStamp and elapsed)", head)
	}
	_ = n
	return l, true, nil
}

// Error classes from JMeter's response codes and messages. JMeter writes
// "Non HTTP response code: <exception class>" when no response arrived.
func classify(code, msg []byte) (core.ErrorClass, int32) {
	status, ok := importer.ParseInt(code)
	if ok && status >= 100 && status <= 999 {
		// 4xx/5xx; a 2xx/3xx marked failed is an assertion (ErrCheck).
		return core.StatusClass(int(status)), int32(status)
	}
	text := string(code) + " " + string(msg)
	switch {
	case strings.Contains(text, "Timeout") || strings.Contains(text, "timed out"):
		return core.ErrTimeout, 0
	case strings.Contains(text, "ConnectException") || strings.Contains(text, "Connection refused"):
		return core.ErrRefused, 0
	case strings.Contains(text, "UnknownHost"):
		return core.ErrDNS, 0
	case strings.Contains(text, "SSL") || strings.Contains(text, "TLS") || strings.Contains(text, "Certificate"):
		return core.ErrTLS, 0
	case strings.Contains(text, "NoHttpResponse") || strings.Contains(text, "SocketException") || strings.Contains(text, "reset") ||
		strings.Contains(text, "ConnectionClosed") || strings.Contains(text, "EOF"):
		return core.ErrReset, 0
	case strings.Contains(text, "ClientProtocol") || strings.Contains(text, "Protocol"):
		return core.ErrProtocol, 0
	}
	if len(code) == 0 {
		return core.ErrCheck, 0 // e.g. an assertion on a non-HTTP sampler
	}
	return core.ErrOther, 0
}

// controllerPrefix starts the response message of Transaction Controller
// samples; JMeter's dashboard recognises them by it (Sample.isController).
const controllerPrefix = "Number of samples in transaction"

// emptyController is a Transaction Controller that ran no sampler; JMeter's
// dashboard ignores it and so does the import (counted in a note).
const emptyController = "Number of samples in transaction : 0"
