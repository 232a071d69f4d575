// Package plan holds the YAML test plan: its types, defaults, strict loading
// with positions, overrides and validation. Every problem in a plan is reported
// at once, as file:line:column, before any traffic is sent.
package plan

import (
	"fmt"
	"time"
)

// Pos is a position in the plan file, 1-based.
type Pos struct {
	Line, Col int
}

// Plan is a loaded, validated test plan. It is immutable once Load returns.
type Plan struct {
	Name   string `yaml:"name"`
	Target string `yaml:"target"` // base URL; request URLs starting with "/" are relative to it
	HTTP   HTTP   `yaml:"http"`
	// Vars are constant variables available as ${name} everywhere.
	Vars map[string]string `yaml:"vars"`
	// Data are the named CSV feeders; ${feeder.column} reads the current row.
	Data map[string]*Feeder `yaml:"data"`
	// Setup runs once per run, before any workload starts, by one user;
	// the variables it extracts are read by every user of every workload.
	// Teardown runs once after the last workload ends. Neither is measured.
	Setup    []Step `yaml:"setup"`
	Teardown []Step `yaml:"teardown"`
	// Prepare are commands run before the first request (after the run
	// directory is created), Cleanup after the last one — also after a
	// failed or interrupted run. Neither is measured; their output,
	// duration and exit code are recorded (see package prepare).
	Prepare []Command `yaml:"prepare"`
	Cleanup []Command `yaml:"cleanup"`
	// Workloads run at the same time, each with its own load. Order is the
	// order in the file.
	Workloads []*Workload `yaml:"workloads"` // a YAML mapping name → workload
	SLA       []SLA       `yaml:"sla"`
	Monitor   Monitor     `yaml:"monitor"`
	// ServerSide are files the servers write during the run — access logs
	// (with an external-call log to join), vmstat, jstat, docker stats —
	// read into the run directory after the load with the run's phases.
	ServerSide ServerSide `yaml:"server_side"`
	// History, when the plan has the key, adds the run to a results
	// history as it ends (docs/history.md); nil without it.
	History *History `yaml:"history"`
	// Secrets names extra headers and variables whose values never reach a
	// report or log (Authorization, Cookie and Set-Cookie always are secret).
	Secrets []string `yaml:"secrets"`
	// Context of the test for its report (all optional, never used to
	// run): what it is about, the system under test (component → version),
	// its environment (item → value: hardware, instances, configuration),
	// the method and the hypothesis. Shown in the run's report and used by
	// a study document when its study file gives none.
	Description string            `yaml:"description"`
	System      map[string]string `yaml:"system"`
	Environment map[string]string `yaml:"environment"`
	Method      string            `yaml:"method"`
	Hypothesis  string            `yaml:"hypothesis"`
	// Lang is the language the run's report is written in ("en", "da";
	// docs/plan.md); "" is English. plateau run/report --lang overrides it.
	Lang string `yaml:"lang"`

	File   string `yaml:"-"` // path of the plan file as given
	Dir    string `yaml:"-"` // directory relative paths resolve against
	Source []byte `yaml:"-"` // the plan as run: the file with overrides applied
}

// HTTP is the client configuration shared by every request.
type HTTP struct {
	Timeout        time.Duration `yaml:"timeout"`         // whole request; default 30s
	ConnectTimeout time.Duration `yaml:"connect_timeout"` // default 5s
	Insecure       bool          `yaml:"insecure"`        // skip TLS verification
	Redirects      int           `yaml:"redirects"`       // max redirects followed; default 10; 0 after explicit "redirects: 0"
	Compression    bool          `yaml:"compression"`     // request gzip
	Connections    string        `yaml:"connections"`     // per_user (default) | shared
	KeepAlive      *bool         `yaml:"keep_alive"`      // default true
	Headers        []Header      `yaml:"headers"`         // sent with every request (mapping name → value)
	MaxBody        int           `yaml:"max_body"`        // bytes kept for checks and extraction; default 1 MiB
	Cookies        *bool         `yaml:"cookies"`         // per-user cookie jar; default true
	// Version is the HTTP version: "1.1" (default), "2" (HTTP/2: over TLS
	// by ALPN, over http:// as h2c with prior knowledge) or "auto" (HTTP/2
	// when a TLS server offers it by ALPN, else HTTP/1.1; http:// URLs
	// stay HTTP/1.1).
	Version string `yaml:"version"`
	// MaxConcurrentStreams bounds the HTTP/2 streams in flight on one
	// connection (default 100); more requests open more connections.
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	// Proxy is an HTTP proxy URL (http://[user:password@]host:port): TLS
	// requests go through CONNECT tunnels, plain ones in absolute form.
	Proxy string `yaml:"proxy"`
	// TLS holds the client certificate, CA bundle and SNI name.
	TLS TLS `yaml:"tls"`
	// CookiesPerIteration empties each user's jar at the start of every
	// iteration ("cookies: per_iteration": a new browser session each time).
	CookiesPerIteration bool `yaml:"-"`
}

// Multipart is a request's multipart/form-data body.
type Multipart struct {
	Fields []Header        `yaml:"fields"` // name → template, sent first, in order
	Files  []MultipartFile `yaml:"files"`
	// Order, when set, is the parts' names in the order sent (a name
	// repeated for each of its parts, fields and files of one name in
	// their own order): a file may come before a field.
	Order []string `yaml:"order"`
}

// Sequence is the order the parts are sent in: each entry a field's
// index, or len(Fields) plus a file's index; nil without Order (fields,
// then files). Order must name every part once (a name as many times as
// it has parts).
func (m *Multipart) Sequence() ([]int, error) {
	if len(m.Order) == 0 {
		return nil, nil
	}
	next := map[string][]int{}
	for i, f := range m.Fields {
		next[f.Name] = append(next[f.Name], i)
	}
	for i, f := range m.Files {
		next[f.Field] = append(next[f.Field], len(m.Fields)+i)
	}
	var seq []int
	for _, name := range m.Order {
		q := next[name]
		if len(q) == 0 {
			return nil, fmt.Errorf("%q names no part (or more parts than it has)", name)
		}
		seq = append(seq, q[0])
		next[name] = q[1:]
	}
	for _, f := range m.Fields {
		if len(next[f.Name]) > 0 {
			return nil, fmt.Errorf("field %q is not in the order", f.Name)
		}
	}
	for _, f := range m.Files {
		if len(next[f.Field]) > 0 {
			return nil, fmt.Errorf("file part %q is not in the order", f.Field)
		}
	}
	return seq, nil
}

// MultipartFile is one file part.
type MultipartFile struct {
	Field       string   `yaml:"field"`        // form field name
	Path        string   `yaml:"path"`         // resolved relative to the plan file
	ContentType string   `yaml:"content_type"` // default application/octet-stream
	FileName    Template `yaml:"filename"`     // default: the path's base name
}

// TLS is http.tls. Load resolves the files relative to the plan file and
// checks that they parse.
type TLS struct {
	// CA is a PEM bundle of the certificate authorities trusted for
	// servers, instead of the system's.
	CA string `yaml:"ca"`
	// Cert and Key are the client certificate and its private key (PEM),
	// sent to servers that ask for one (mTLS).
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ServerName is the name sent by SNI and verified in the server's
	// certificate, instead of the URL's host.
	ServerName string `yaml:"server_name"`
}

// Header is one request header; Value is a template.
type Header struct {
	Name  string
	Value Template
	Key   *Template // form: and query: keys are templates too
}

// Feeder is a data source: a CSV file (with a header row, or headerless
// with Declared columns), a JSON array of objects or NDJSON (one object a
// line).
type Feeder struct {
	Name   string `yaml:"-"`
	CSV    string `yaml:"csv"`    // path, relative to the plan file
	JSON   string `yaml:"json"`   // a JSON array of objects
	NDJSON string `yaml:"ndjson"` // one JSON object per line
	// Generate makes the rows with a datagen spec when the plan is
	// loaded, instead of reading a file (plateau datagen; docs/datagen.md).
	Generate    *GenerateData `yaml:"generate"`
	Declared    []string      `yaml:"columns"`      // a headerless CSV's column names
	Order       string        `yaml:"order"`        // sequential (default) | random | unique | per_user | each_user
	OnExhausted string        `yaml:"on_exhausted"` // stop | recycle (default: stop for unique, recycle otherwise)
	// OnEnd is what the end of the data does: recycle, stop_user (that
	// user stops), stop_run (the run stops). It replaces on_exhausted
	// (stop is stop_run there).
	OnEnd     string `yaml:"on_end"`
	Delimiter string `yaml:"delimiter"` // default ","
	// Columns and Rows are filled by Load from the file (header row = Columns).
	Columns []string   `yaml:"-"`
	Rows    [][]string `yaml:"-"`
	// Index holds a CSV larger than Options.FeederInMemory instead of Rows: the
	// rows' offsets in the file, read one by one (Len and Row read either).
	Index *RowIndex `yaml:"-"`
	// Pending marks a data file that did not exist when the plan was
	// loaded, in a plan whose prepare: commands may write it: its
	// columns are unknown until the plan is loaded again after them.
	Pending bool `yaml:"-"`
	Pos     Pos  `yaml:"-"`
}

// GenerateData is a feeder's generate: one entity of a datagen spec, made
// in memory at load time with the spec's seed (or Seed) and scale (or
// Scale): the same rows plateau datagen writes to that entity's file.
type GenerateData struct {
	Spec   string  `yaml:"spec"`   // the spec file, relative to the plan file
	Entity string  `yaml:"entity"` // the entity whose rows feed the plan
	Scale  float64 `yaml:"scale"`  // 0: the spec's
	Seed   *int    `yaml:"seed"`   // nil: the spec's
	Pos    Pos     `yaml:"-"`
}

// Workload is one independently loaded scenario.
type Workload struct {
	Name     string `yaml:"-"`
	Setup    []Step `yaml:"setup"`    // once per virtual user, not measured
	Scenario []Step `yaml:"scenario"` // one iteration
	Teardown []Step `yaml:"teardown"` // once per virtual user at the end, not measured
	Load     Load   `yaml:"load"`
	// OnFail is what a failed request does unless its transaction or
	// itself says otherwise: continue, next_iteration, stop_user,
	// stop_run. Empty: a failed extraction skips to the next iteration, a
	// failed check continues.
	OnFail string `yaml:"on_fail"`
	// Engine runs the workload in another tool instead of plateau's
	// engine: jmeter, k6 or locust, with Script (a .jmx, .js or .py,
	// relative to the plan), JMeter Properties (-J) and the script's Env
	// (-e). The workload's load (users, ramp_up, duration, rate) and the
	// plan's target are mapped onto the tool's own settings; the plan's
	// monitors, SLA, server_side, prepare and cleanup apply unchanged
	// (docs/run-foreign.md).
	Engine     string            `yaml:"engine"`
	Script     string            `yaml:"script"`
	Properties map[string]string `yaml:"properties"`
	Env        map[string]string `yaml:"env"`
	Pos        Pos               `yaml:"-"`
}

// Engines a workload may name besides plateau's own.
var Engines = []string{"jmeter", "k6", "locust", "gatling"}

// What a failed request does (on_fail).
const (
	OnFailContinue      = "continue"
	OnFailNextIteration = "next_iteration"
	OnFailStopUser      = "stop_user"
	OnFailStopRun       = "stop_run"
)

// Step is exactly one of its fields.
type Step struct {
	Request     *Request     `yaml:"request"`
	Think       *Think       `yaml:"think"`
	Transaction *Transaction `yaml:"transaction"`
	Loop        *Loop        `yaml:"loop"`
	If          *If          `yaml:"if"`
	Choose      []Branch     `yaml:"choose"`
	Foreach     *Foreach     `yaml:"foreach"`
	Until       *Until       `yaml:"until"`
	Rendezvous  *Rendezvous  `yaml:"rendezvous"`
	// WebSocket opens a connection and runs its steps on it; Send and
	// Receive are steps inside a websocket's steps only.
	WebSocket *WebSocket `yaml:"websocket"`
	Send      *Send      `yaml:"send"`
	Receive   *Receive   `yaml:"receive"`
	GRPC      *GRPC      `yaml:"grpc"`
	Trend     *Trend     `yaml:"trend"`
	Pos       Pos        `yaml:"-"`
}

// Trend records a value the plan computes — a time extracted from a
// response, such as the server's own processing time — as a time under its
// own label (k6's custom Trend): it gets the percentiles of the per-label
// tables and takes response-time requirements by label, and stays out of
// the request totals like a transaction. Value renders to milliseconds
// ("120", "12.5") or a Go duration ("1.5s", "350ms", "800us"); anything
// else, or a negative time, is recorded as a failed sample saying so.
type Trend struct {
	Name  string    `yaml:"name"`
	Value *Template `yaml:"value"`
	Pos   Pos       `yaml:"-"`
}

// WebSocket is a websocket step: it opens a connection to URL (the
// handshake is the label "Name connect"), runs Steps — send and receive
// steps, and any other step (think, loop, if, request…) — with the
// connection open, then closes it. The whole session is recorded under
// Name, as a transaction-like row.
type WebSocket struct {
	Name string `yaml:"name"` // default "WS <path>"
	// URL is ws:// or wss://, or a path relative to the target (http:// →
	// ws://, https:// → wss://).
	URL Template `yaml:"url"`
	// Headers are sent in the opening handshake, after http.headers; the
	// user's cookies for the URL are sent too.
	Headers []Header `yaml:"headers"`
	// TLS overrides http.tls fields for this connection.
	TLS *TLS `yaml:"tls"`
	// Timeout is the default timeout of the receive steps and replies
	// inside (default: http.timeout).
	Timeout time.Duration `yaml:"timeout"`
	Steps   []Step        `yaml:"steps"`
	// OnFail is what a failed handshake, send or receive does (default:
	// the enclosing transaction's or workload's).
	OnFail string `yaml:"on_fail"`
	Pos    Pos    `yaml:"-"`
}

// Send sends one message on the enclosing websocket: Text, Binary (the
// rendered template's bytes in a binary message) or JSON (a YAML value
// encoded as JSON, in a text message). With Reply it waits for the
// matching message and its sample is the round trip (send → reply).
type Send struct {
	Name   string    `yaml:"name"` // label; default "<websocket name> send"
	Text   *Template `yaml:"text"`
	Binary *Template `yaml:"binary"`
	JSON   *Template `yaml:"json"`
	Reply  *Receive  `yaml:"reply"`
	OnFail string    `yaml:"on_fail"`
	Pos    Pos       `yaml:"-"`
}

// Receive waits for a message on the enclosing websocket that passes
// Checks (the first message when there are none), skipping the others,
// for at most Timeout; its sample is the wait. Extract reads the matching
// message as a response body.
type Receive struct {
	Name    string              `yaml:"name"` // label; default "<websocket name> receive"
	Timeout time.Duration       `yaml:"timeout"`
	Checks  []Check             `yaml:"check"`
	Extract map[string]*Extract `yaml:"extract"`
	OnFail  string              `yaml:"on_fail"`
	Pos     Pos                 `yaml:"-"`
}

// Cond is a condition in the expression language of package expr,
// checked at load time: '${status} == 200 && ${cart_id} != ""'.
type Cond struct {
	Src string
	Pos Pos
}

// If runs Steps when Cond holds, else Else.
type If struct {
	Cond  Cond   `yaml:"cond"`
	Steps []Step `yaml:"steps"`
	Else  []Step `yaml:"else"`
}

// Branch is one weighted branch of a choose step: each iteration runs one
// branch, picked at random with probability weight/sum of weights.
type Branch struct {
	Name   string  `yaml:"name"`
	Weight float64 `yaml:"weight"`
	Steps  []Step  `yaml:"steps"`
	Pos    Pos     `yaml:"-"`
}

// Foreach runs Steps once per item, with the item in variable As. The
// items are a literal list or a variable holding a list (an extraction
// with all: true, or a JSON array).
type Foreach struct {
	Items []string  `yaml:"-"`
	Var   *Template `yaml:"-"`
	In    string    `yaml:"in"` // as written, for messages
	As    string    `yaml:"as"`
	Max   int       `yaml:"max"` // at most this many items (0: all)
	Steps []Step    `yaml:"steps"`
}

// Until repeats Steps every Interval until Cond holds or Timeout passes.
// The whole wait is recorded under the label Name.
type Until struct {
	Name     string        `yaml:"name"`
	Cond     Cond          `yaml:"cond"`
	Interval time.Duration `yaml:"interval"`
	Timeout  time.Duration `yaml:"timeout"`
	Steps    []Step        `yaml:"steps"`
	OnFail   string        `yaml:"on_fail"` // on timeout; default continue
}

// Rendezvous holds users until Users have arrived (or Timeout passes),
// then releases them together.
type Rendezvous struct {
	Name    string        `yaml:"name"`
	Users   int           `yaml:"users"`
	Timeout time.Duration `yaml:"timeout"`
}

// Request is one HTTP request. URL, header values and Body are templates.
type Request struct {
	Name    string   `yaml:"name"` // label; default "METHOD path"
	Method  string   `yaml:"method"`
	URL     Template `yaml:"url"`
	Headers []Header `yaml:"headers"`
	// Body is the raw body. JSON (any YAML value, encoded as JSON with
	// templates inside strings rendered) and Form (url-encoded) are
	// alternatives that also set Content-Type.
	Body *Template `yaml:"body"`
	JSON *Template `yaml:"json"` // Load encodes the YAML value to a JSON template
	Form []Header  `yaml:"form"`
	// BodyFile is a file sent as the body, streamed from disk at each
	// request (resolved relative to the plan file).
	BodyFile string `yaml:"body_file"`
	// Multipart is a multipart/form-data body: fields and files, the files
	// streamed from disk.
	Multipart *Multipart `yaml:"multipart"`
	// Cookies are put into the user's jar for the request's URL before it
	// is sent (the jar must be on).
	Cookies []Header `yaml:"cookies"`
	// Query is appended to the URL, keys and values URL-encoded.
	Query []Header `yaml:"query"`
	// Encode false sends ${…} values in the URL as they are; by default
	// they are percent-encoded (path segments keep /). "encode: postman"
	// sets Postman instead.
	Encode *bool `yaml:"encode"`
	// Postman (encode: postman) inserts ${…} values as they are, then
	// encodes the whole URL as Postman's runtime does (postmanurl) and
	// sends its path and query on the request line byte for byte.
	Postman bool                `yaml:"-"`
	Extract map[string]*Extract `yaml:"extract"`
	// Checks are the conditions on the response (check: a mapping, or a
	// list of them); all must hold.
	Checks  []Check       `yaml:"check"`
	Timeout time.Duration `yaml:"timeout"`
	// Redirects overrides http.redirects for this request (nil: inherit).
	Redirects *int `yaml:"redirects"`
	// HTTPVersion overrides http.version for this request.
	HTTPVersion string `yaml:"http_version"`
	// TLS overrides http.tls fields for this request; requests with the
	// same settings share connections.
	TLS    *TLS   `yaml:"tls"`
	OnFail string `yaml:"on_fail"`
	Pos    Pos    `yaml:"-"`
}

// Extract takes a value from a response into a variable. Exactly one
// source: JSON, Regex, Header, Cookie, Boundary (Left and Right), CSS or
// XPath.
type Extract struct {
	JSON   string `yaml:"json"`   // JSONPath, with filters: $.items[?(@.open)].id
	Regex  string `yaml:"regex"`  // first capture group, or the whole match
	Header string `yaml:"header"` // response header name
	Cookie string `yaml:"cookie"` // cookie name: set by this response, else in the user's jar
	Left   string `yaml:"left"`   // boundary: the text between Left and Right
	Right  string `yaml:"right"`
	CSS    string `yaml:"css"`   // CSS selector on an HTML response
	XPath  string `yaml:"xpath"` // XPath on an HTML or XML response
	Attr   string `yaml:"attr"`  // for css: the attribute to read (default: the text)
	// All stores every match as a JSON array (for foreach); Pick chooses
	// one match: first (default), last or random.
	All     bool    `yaml:"all"`
	Pick    string  `yaml:"pick"`
	Default *string `yaml:"default"`
	// AsJSON keeps a json match as JSON text: a string with its quotes, a
	// number or boolean as written, an object or list as JSON — for a
	// body that sends the value with the type the response gave it.
	AsJSON bool `yaml:"as_json"`
	Pos    Pos  `yaml:"-"`
}

// Check is a set of conditions on a response; all must hold.
type Check struct {
	Name        string        `yaml:"name"`         // label in the checks table and thresholds; default from the conditions
	Status      []int         `yaml:"status"`       // accepted statuses; default: any < 400
	Contains    string        `yaml:"body"`         // body must contain this text
	NotContains string        `yaml:"not_body"`     // body must not contain this text
	Regex       string        `yaml:"regex"`        // body must match
	NotRegex    string        `yaml:"not_regex"`    // body must not match
	Header      []JSONCheck   `yaml:"header"`       // mapping header → value it must equal
	HeaderMatch []JSONCheck   `yaml:"header_match"` // mapping header → regex its value must match
	HeaderSet   []string      `yaml:"header_exists"`
	MinSize     int           `yaml:"min_size"` // body bytes
	MaxSize     int           `yaml:"max_size"`
	JSON        []JSONCheck   `yaml:"json"`         // mapping path → expected value
	JSONNot     []JSONCheck   `yaml:"json_not"`     // mapping path → value it must not have
	JSONMatch   []JSONCheck   `yaml:"json_match"`   // mapping path → regex
	JSONExists  []string      `yaml:"json_exists"`  // paths that must select something
	JSONAbsent  []string      `yaml:"json_absent"`  // paths that must select nothing
	MaxDuration time.Duration `yaml:"max_duration"` // slower responses fail
	// Code lists the gRPC status codes accepted (names or numbers; grpc
	// steps only; default OK). MinMessages and MaxMessages bound the
	// messages of a server stream (0: no bound).
	Code        []string `yaml:"code"`
	MinMessages int      `yaml:"min_messages"`
	MaxMessages int      `yaml:"max_messages"`
	Pos         Pos      `yaml:"-"`
}

// JSONCheck requires the value at Path to equal Value (compared as text).
type JSONCheck struct {
	Path  string
	Value string
}

// Think pauses a virtual user: Fixed, or uniform between Min and Max when
// Max > 0 (IsUniform). In YAML: "think: 1s", "think: uniform(500ms, 1500ms)"
// or "think: {min: 500ms, max: 1500ms}".
type Think struct {
	Fixed    time.Duration
	Min, Max time.Duration
	// Dist is gaussian, exponential or lognormal (then Fixed, Min and Max
	// are zero): Mean is the mean (the median for lognormal), Spread the
	// standard deviation (gaussian) or the 95th percentile (lognormal).
	Dist         string
	Mean, Spread time.Duration
}

// Transaction groups steps under one label whose time is the sum of its
// requests (JMeter's Transaction Controller without timers).
type Transaction struct {
	Name   string `yaml:"name"`
	Steps  []Step `yaml:"steps"`
	OnFail string `yaml:"on_fail"` // for the requests inside
}

// Loop repeats its steps Count times, or while While holds, at most Max
// times.
type Loop struct {
	Count int    `yaml:"count"`
	While Cond   `yaml:"while"`
	Max   int    `yaml:"max"`
	Steps []Step `yaml:"steps"`
}

// Load is the load shape of a workload. Exactly one model applies:
//   - closed:  Users with Duration (and RampUp), or Users with Iterations
//   - pacing:  Users with Pace and Duration
//   - open:    Rate with Duration (and MaxUsers), or Stages
//   - steps:   Steps (closed steps of users, or open steps of rate), StopWhen
type Load struct {
	Users      int           `yaml:"users"`
	RampUp     time.Duration `yaml:"ramp_up"`
	Duration   time.Duration `yaml:"duration"`
	Iterations int           `yaml:"iterations"` // per user
	Pace       time.Duration `yaml:"pace"`
	Rate       Rate          `yaml:"rate"`
	MaxUsers   int           `yaml:"max_users"` // open model concurrency cap; default 1000
	Stages     []Stage       `yaml:"stages"`
	Steps      []LoadStep    `yaml:"steps"`
	StopWhen   *StopRule     `yaml:"stop_when"`
	StartAfter time.Duration `yaml:"start_after"` // delay from run start
	// RampDown, for closed and stepped loads of users, stops the users one
	// by one, evenly over this time, after the load's end instead of all
	// at once.
	RampDown time.Duration `yaml:"ramp_down"`
	// GracefulStop is how long iterations running at the end of the load
	// may finish before their requests are cut off (recorded as aborted);
	// default DefaultGracefulStop. Nothing new starts after the load ends.
	GracefulStop time.Duration `yaml:"graceful_stop"`
	// Search, for a load of rate: or users:, asks for a capacity search
	// over it instead of one run at it (search.go); nil otherwise.
	Search *LoadSearch `yaml:"search"`
	Pos    Pos         `yaml:"-"`
}

// Rate is an arrival rate in iterations per second. YAML: "200/s", "30/m", "5/1s".
type Rate float64

// Stage is one segment of a ramping arrival rate: the rate moves linearly from
// the previous stage's rate (0 at the start) to Rate over Duration — unless
// Hold, in which case it is constant.
//
// A stage by Users instead (closed model, k6's ramping-vus) moves the
// number of users linearly from the previous stage's (0 at the start) to
// Users over Duration; all stages of a load use rate or all use users.
type Stage struct {
	Rate     Rate          `yaml:"rate"`
	Users    int           `yaml:"users"`
	Duration time.Duration `yaml:"duration"`
	Hold     bool          `yaml:"hold"` // constant at Rate for Duration instead of ramping to it
	ByUsers  bool          `yaml:"-"`    // set by Load: the stage gives users
}

// LoadStep is one step of a stepped load: Users (closed) or Rate (open).
type LoadStep struct {
	Name     string        `yaml:"name"` // default "step N"
	Users    int           `yaml:"users"`
	Rate     Rate          `yaml:"rate"`
	Pace     time.Duration `yaml:"pace"`
	RampUp   time.Duration `yaml:"ramp_up"`
	Duration time.Duration `yaml:"duration"`
}

// StopRule ends a stepped load after the first step whose throughput grew
// less than Threshold (a fraction, 0.05 = 5 %) over the previous step.
// YAML: "throughput_gain < 5%".
type StopRule struct {
	Metric    string  // throughput_gain
	Threshold float64 // fraction
	Text      string
}

// SLA is one requirement expression; its grammar lives in the sla package.
type SLA struct {
	Expr string
	Pos  Pos
	// AbortOnFail stops the run as soon as the requirement is broken over
	// the samples so far (k6's abortOnFail), judged every second once Grace
	// has passed since the start (k6's delayAbortEval). YAML: an entry
	// {expr: "…", abort_on_fail: true, grace: 30s}.
	AbortOnFail bool
	Grace       time.Duration
}

// Monitor configures server-side sampling.
type Monitor struct {
	Interval time.Duration   `yaml:"interval"` // default 1s
	Targets  []MonitorTarget `yaml:"targets"`
}

// MonitorTarget is one monitored target; Kind is the YAML key (host, process,
// jvm, cgroup, postgres, prometheus).
type MonitorTarget struct {
	Kind     string
	Name     string        `yaml:"name"`
	Pid      int           `yaml:"pid"`
	PidFile  string        `yaml:"pid_file"`
	Match    string        `yaml:"match"`
	Children bool          `yaml:"children"`
	Path     string        `yaml:"path"`
	DSN      string        `yaml:"dsn"`
	URL      string        `yaml:"url"`
	Targets  []string      `yaml:"targets"` // prometheus: several host:port endpoints
	Series   []string      `yaml:"series"`
	Interval time.Duration `yaml:"interval"`
	// Role is what the target is to the test: system_under_test (sut),
	// generator, database or balancer; empty takes the kind's default.
	Role string `yaml:"role"`
	// Options holds the fields of kinds that parse their own configuration
	// (promql, mysql, cloudwatch): every key but name and interval, as
	// decoded YAML values. The monitor kind checks them (CheckMonitor).
	Options map[string]any `yaml:"-"`
	Pos     Pos            `yaml:"-"`
}

// ServerSide lists the server-side files attached to the run.
type ServerSide struct {
	// Settle is how long to wait after the load before the files are read,
	// so the servers have flushed their last lines (default 2s).
	Settle time.Duration `yaml:"settle"`
	// TZ is the zone of times the files write without one (vmstat -t
	// naming a zone such as CEST, a time option without an offset): an
	// IANA name, UTC or ±hh:mm, as plateau import --tz.
	TZ      string         `yaml:"tz"`
	Sources []ServerSource `yaml:"sources"`
}

// ServerSource is one attached file; Kind is the YAML key (accesslog,
// vmstat, jstat, dockerstats — the types of `plateau import`).
type ServerSource struct {
	Kind string
	// Name is the server, host, JVM or container name in the report
	// (default: the file name).
	Name string
	// Path is the file as written in the plan; relative paths resolve
	// against the plan's directory (Plan.Dir), as do path options.
	Path string
	// Options are the import type's options (format, external, start,
	// interval, …) as text. The CLI checks them (CheckServerSource).
	Options map[string]string
	Pos     Pos
}

// History is where a run is remembered: the results store and the tags
// the run is stored with.
type History struct {
	// DB is an SQLite file or a postgres:// URL; empty means the default
	// file in the user's data directory (as plateau history --db).
	DB string `yaml:"db"`
	// Tags label the run (release, build, environment …); --tag on the
	// history commands gives the same.
	Tags map[string]string `yaml:"tags"`
	Pos  Pos               `yaml:"-"`
}

// DefaultSettle is ServerSide.Settle's default.
const DefaultSettle = 2 * time.Second

// Template is a string with ${name} references, compiled once at load time so
// rendering on the hot path is a loop over parts.
type Template struct {
	Raw   string
	Parts []Part
}

// Part is a literal (IsLit), a variable reference (Var) or an expression
// (Expr: a function call such as uuid() or urlencode(name), see package
// expr).
type Part struct {
	Lit  string
	Var  string // "token", "patients.cpr"; env.* is resolved at load time
	Expr string // expression source, checked at load time
	// Type is set on a json: value written as "${n:int}": the value is
	// sent as a JSON number (int, number), boolean (bool) or raw JSON
	// (json) instead of a string.
	Type string
	// JSONEscape says the variable's value goes inside a JSON string (a
	// template built from a request's json: value), so it must be escaped
	// as JSON string content: " \ and control characters. Literal parts of
	// such templates are already valid JSON.
	JSONEscape bool
}

// IsConst reports whether the template has no variables.
func (t *Template) IsConst() bool {
	return len(t.Parts) == 0 || (len(t.Parts) == 1 && t.Parts[0].IsLit())
}

// IsLit reports whether the part is literal text.
func (p Part) IsLit() bool { return p.Var == "" && p.Expr == "" }
