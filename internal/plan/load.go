package plan

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	goccy "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"gopkg.in/yaml.v3"
)

// Options change how a plan is loaded.
type Options struct {
	// Overrides are "--set key=value" items applied to the YAML tree before
	// decoding: "workloads.read.load.users=20", "target=http://127.0.0.1:9",
	// "workloads.read.load={users: 5, duration: 10s}".
	Overrides []string
	// Env looks up ${env.NAME}. When nil, every ${env.NAME} without a
	// default is an error: the loader never reads the process environment
	// by itself (the CLI passes os.LookupEnv).
	Env func(string) (string, bool)
	// CheckSLA checks the syntax of one SLA expression. May be nil.
	CheckSLA func(expr string) error
	// CheckMonitor checks one monitor target with the monitor package's own
	// rules (regexps, URLs, DSNs), without touching the system. May be nil.
	CheckMonitor func(t *MonitorTarget) error
	// Prepared says the plan's prepare: commands have run, so every data
	// file must exist now. Without it, a data file missing from a plan
	// with prepare: commands is Pending, not an error.
	Prepared bool
	// Generate makes a generate: feeder's rows: entity of the datagen
	// spec at path, at scale (0: the spec's) with seed (nil: the spec's).
	// Nil: generate: feeders are an error.
	Generate func(path, entity string, scale float64, seed *uint64) (cols []string, rows [][]string, err error)
	// CheckServerSource checks one server_side source's kind and options
	// with the importers' own rules, without reading the file. May be nil.
	CheckServerSource func(s *ServerSource) error
	// Machine, when set, bounds the load by what the machine can hold
	// (CPUs, open files, memory): a plan asking for more is refused at the
	// key that asks. Nil: no machine bounds.
	Machine *Machine
	// FeederInMemory is the largest CSV file a feeder reads into memory;
	// a larger one is indexed (RowIndex). 0: DefaultFeederInMemory.
	FeederInMemory int64
}

// maxPlanBytes bounds the plan file size; a plan is hand-written text.
const maxPlanBytes = 16 << 20

// LoadFile reads, decodes and validates the plan at path. (It is not named
// Load because Load is the load-shape type.) Relative paths in the
// plan (CSV feeders) resolve against the plan's directory. Any problem in the
// plan is returned as an Errors value that lists every problem at once.
func LoadFile(path string, opt Options) (*Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: "cannot read plan: " + errText(err), Err: err}}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxPlanBytes+1))
	if err != nil {
		return nil, Errors{{File: path, Msg: "cannot read plan: " + errText(err), Err: err}}
	}
	if len(src) > maxPlanBytes {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("plan is larger than %d MiB", maxPlanBytes>>20)}}
	}
	return Parse(path, src, filepath.Dir(path), opt)
}

// Parse is LoadFile from bytes: name is the file name used in errors and dir the
// directory relative paths resolve against.
func Parse(name string, src []byte, dir string, opt Options) (*Plan, error) {
	root, perr := parseYAML(name, src)
	if perr != nil {
		return nil, Errors{*perr}
	}
	d := newDecoder(name, src, dir, opt)
	applied := d.applyOverrides(root, opt.Overrides)
	source := src
	if applied {
		var buf bytes.Buffer
		if err := encodeYAML(&buf, root); err != nil {
			d.errs = append(d.errs, Error{File: name, Pos: Pos{1, 1}, Msg: "cannot re-encode plan after --set: " + errText(err), Err: err})
		}
		source = buf.Bytes()
	}
	p := d.decodePlan(root)
	if len(d.errs) > 0 {
		return nil, d.errs.sorted(name)
	}
	p.File = name
	p.Dir = dir
	p.Source = source
	return p, nil
}

// parseYAML decodes src into a node tree. The plan is the first document;
// a second document is an error because it would be silently ignored.
func parseYAML(name string, src []byte) (root *yaml.Node, perr *Error) {
	defer func() {
		// yaml.v3 is third-party code fed untrusted text; a panic there must
		// become a plan error, not a crash.
		if r := recover(); r != nil {
			root, perr = nil, &Error{File: name, Pos: Pos{1, 1}, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}
		}
	}()
	if pos, deep := yamlTooDeep(src, MaxYAMLDepth); deep {
		return nil, &Error{File: name, Pos: pos, Msg: fmt.Sprintf("YAML nested deeper than %d levels", MaxYAMLDepth)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Pos: Pos{1, 1}, Msg: "plan is empty"}
		}
		return nil, yamlError(name, src, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Pos: Pos{extra.Line, max(extra.Column, 1)}, Msg: "plan holds a second YAML document (after ---); put everything in one"}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(name, src, err)
	}
	return &doc, nil
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error into an Error. yaml.v3 reports a
// line only: the right one for scanner errors, but for parser errors ("did
// not find expected …") the 0-based line where the enclosing block starts.
// goccy/go-yaml's parser reports the offending token's line and column, so
// its position is used for parser errors and its column for scanner errors
// on the same line; the message stays yaml.v3's.
func yamlError(name string, src []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	parserErr := strings.HasPrefix(msg, "did not find expected")
	gpos, gmsg, gok := syntaxPos(src)
	pos := Pos{1, 1}
	switch {
	case gok && strings.Contains(msg, "exceeded max depth"):
		// yaml.v3's own limit (10,000): say plateau's, where it is passed.
		pos, msg = gpos, gmsg
	case gok && strings.Contains(msg, "unexpected end of stream"):
		// An unclosed quote or bracket: goccy points at where it opened.
		pos, msg = gpos, gmsg
	case line > 0 && !parserErr:
		pos.Line = line
		if gok && gpos.Line == line {
			pos.Col = gpos.Col
		}
	case gok:
		pos = gpos
	case line > 0:
		pos.Line = line + 1
	}
	lines := strings.Split(string(src), "\n")
	if pos.Line <= len(lines) && strings.Contains(lines[pos.Line-1], "${") {
		msg += " (inside { } or [ ], quote values that contain ${…})"
	}
	return &Error{File: name, Pos: pos, Msg: "YAML syntax: " + msg, Err: err}
}

// syntaxPos asks goccy/go-yaml where src's syntax error is.
func syntaxPos(src []byte) (pos Pos, msg string, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if pos, deep := yamlTooDeep(src, MaxYAMLDepth); deep {
		// goccy has no depth limit: 20,000 levels cost it 640 MB.
		return pos, fmt.Sprintf("nested deeper than %d levels", MaxYAMLDepth), true
	}
	_, err := goccyparser.ParseBytes(src, 0)
	var se *goccy.SyntaxError
	if !errors.As(err, &se) || se.Token == nil || se.Token.Position == nil {
		return Pos{}, "", false
	}
	// goccy rejects duplicate keys, which yaml.v3 accepts (and the decoder
	// reports with both positions); that is not the syntax error at hand.
	if strings.Contains(se.Message, "already defined") {
		return Pos{}, "", false
	}
	p := se.Token.Position
	return Pos{max(p.Line, 1), max(p.Column, 1)}, se.Message, true
}

// encodeYAML writes a node tree with two-space indentation.
func encodeYAML(w io.Writer, root *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encoding YAML: %v", r)
		}
	}()
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return fmt.Errorf("encoding YAML: %w", err)
	}
	return enc.Close()
}

// errText is err's message without the path of an *os.PathError: the
// Error around it already names the file.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// defaultPlan is the plan before decoding: every default that does not
// depend on other fields. Decoding overwrites what the file sets.
func defaultPlan() *Plan {
	t, tr := true, true
	return &Plan{
		HTTP: HTTP{
			Timeout:        30 * time.Second,
			ConnectTimeout: 5 * time.Second,
			Redirects:      10,
			Connections:    ConnPerUser,
			KeepAlive:      &t,
			MaxBody:        1 << 20,
			Cookies:        &tr,
		},
		Monitor:    Monitor{Interval: time.Second},
		ServerSide: ServerSide{Settle: DefaultSettle},
	}
}

// Connection sharing modes for HTTP.Connections.
const (
	ConnPerUser = "per_user" // each virtual user has its own connections (like a browser)
	ConnShared  = "shared"   // one pool for all users of the run
)

// Feeder orders and exhaustion policies.
const (
	OrderSequential = "sequential"
	OrderRandom     = "random"
	OrderUnique     = "unique"
	OrderPerUser    = "per_user" // one row per user, kept for all its iterations
	// OrderEachUser: every user reads the rows in file order from the
	// first, on its own cursor (JMeter's CSV share mode "current thread").
	OrderEachUser    = "each_user"
	ExhaustedStop    = "stop"
	ExhaustedRecycle = "recycle"
	EndStopUser      = "stop_user" // on_end: the user that finds no row stops
	EndStopRun       = "stop_run"  // on_end: the run stops
)

// DefaultGracefulStop is how long iterations running when a load ends may
// finish (k6's gracefulStop default).
const DefaultGracefulStop = 30 * time.Second

// DefaultMaxUsers caps the concurrency of the open model when max_users is
// not given.
const DefaultMaxUsers = 1000
