package accesslog

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
)

// Presets are named log formats, in nginx log_format notation.
var Presets = map[string]string{
	// nginx's predefined "combined" format, the commonest log there is: no
	// duration, so only throughput, statuses, requests and bytes.
	"combined": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"`,
	// The Common Log Format (no duration).
	"common": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent`,
	// Apache's combined and common formats (no duration; %t is the arrival time).
	"apache_combined": `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`,
	"apache_common":   `%h %l %u %t "%r" %>s %b`,
	// nginx's predefined "combined" plus $request_time, the usual way to
	// get durations into an nginx log.
	"combined_rt": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time`,
	// combined plus $request_time and $upstream_response_time.
	"combined_rt_upstream": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time`,
	// The Common Log Format plus $request_time.
	"common_rt": `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent $request_time`,
	// Apache's combined format plus %D (microseconds): LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %D".
	"apache_combined_D": `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D`,
	// Apache's common format plus %D.
	"apache_common_D": `%h %l %u %t "%r" %>s %b %D`,
	// The plateau demo's access log (internal/demo/sut AccessLogFormat).
	"plateau": "$time_iso8601 $request_method $uri $status $request_time_ms $http_x_message_id $remote_addr",
	// The plateau demo's external-call log (internal/demo/sut ExternalLogFormat).
	"plateau_external": "$time_iso8601 $http_x_message_id $service $request_time_ms $outcome",
}

// PresetNames lists the presets in name order.
func PresetNames() []string {
	out := make([]string, 0, len(Presets))
	for n := range Presets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Field roles: what a variable means to the import.
type role int

const (
	roleIgnore      role = iota
	roleTimeLocal        // nginx $time_local: when the response was logged (end)
	roleTimeStartCL      // Apache %t: when the request was received (start)
	roleTimeISO          // $time_iso8601 (end)
	roleTimeMsec         // $msec: epoch seconds with ms (end)
	roleRequest          // "GET /path HTTP/1.1"
	roleMethod
	rolePath // $uri, $request_uri (query string dropped)
	roleStatus
	roleDurS      // seconds with fraction: $request_time
	roleDurMs     // milliseconds with fraction: $request_time_ms
	roleDurUs     // microseconds: Apache %D, $request_time_us
	roleBytesSent // bytes the server sent ($body_bytes_sent, $bytes_sent, %b)
	roleBytesRecv // bytes the server received ($request_length)
	roleID        // request / message id
	roleOutcome   // external log: status or "timeout"/"error"
	roleService   // external log: downstream service name
)

var varRoles = map[string]role{
	"time_local": roleTimeLocal, "time_apache": roleTimeStartCL, "time_iso8601": roleTimeISO, "msec": roleTimeMsec,
	"request": roleRequest, "request_method": roleMethod, "uri": rolePath, "request_uri": rolePath,
	"status": roleStatus, "request_time": roleDurS, "request_time_ms": roleDurMs, "request_time_us": roleDurUs,
	"body_bytes_sent": roleBytesSent, "bytes_sent": roleBytesSent, "request_length": roleBytesRecv,
	"http_x_message_id": roleID, "message_id": roleID, "request_id": roleID, "http_x_request_id": roleID,
	"http_x_correlation_id": roleID, "outcome": roleOutcome, "service": roleService,
}

// apacheDirectives translates Apache mod_log_config directives to nginx
// variables.
var apacheDirectives = []struct{ apache, nginx string }{
	{"%>s", "$status"}, {"%<s", "$status"}, {"%s", "$status"}, {"%h", "$remote_addr"}, {"%a", "$remote_addr"},
	{"%l", "$remote_ident"}, {"%u", "$remote_user"}, {"%t", "[$time_apache]"}, {"%r", "$request"},
	{"%b", "$body_bytes_sent"}, {"%B", "$body_bytes_sent"}, {"%O", "$bytes_sent"}, {"%I", "$request_length"},
	{"%D", "$request_time_us"}, {"%{us}T", "$request_time_us"}, {"%{ms}T", "$request_time_ms"},
	{"%m", "$request_method"}, {"%U", "$uri"}, {"%v", "$server_name"}, {"%p", "$server_port"},
	{"%P", "$pid"}, {"%X", "$connection_status"}, {"%{UNIQUE_ID}e", "$request_id"},
}

// fromApache converts an Apache LogFormat string to nginx notation.
func fromApache(f string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(f); {
		if f[i] != '%' {
			b.WriteByte(f[i])
			i++
			continue
		}
		matched := false
		for _, d := range apacheDirectives {
			if strings.HasPrefix(f[i:], d.apache) {
				b.WriteString(d.nginx)
				i += len(d.apache)
				matched = true
				break
			}
		}
		if matched {
			continue
		}
		// %{Name}i: a request header.
		if strings.HasPrefix(f[i:], "%{") {
			end := strings.Index(f[i:], "}")
			if end > 2 && i+end+1 < len(f) && (f[i+end+1] == 'i' || f[i+end+1] == 'o') {
				name := strings.ToLower(strings.ReplaceAll(f[i+2:i+end], "-", "_"))
				b.WriteString("$http_" + name)
				i += end + 2
				continue
			}
		}
		if strings.HasPrefix(f[i:], "%T") {
			return "", fmt.Errorf("apache %%T logs whole seconds, too coarse for response times; use %%D")
		}
		return "", fmt.Errorf("apache format directive at %q not supported", f[i:min(len(f), i+6)])
	}
	return b.String(), nil
}

// token is a literal or a variable of a compiled format.
type token struct {
	lit  []byte // literal text (when role is −1 …): used when name == ""
	name string
	role role
}

// Format is a compiled log format.
type Format struct {
	Source string // the nginx-notation format
	toks   []token
	has    map[role]bool
}

// Compile compiles a preset name, an nginx log_format string, or an Apache
// LogFormat string (recognised by its % directives and no $ variables).
func Compile(f string) (*Format, error) {
	if p, ok := Presets[f]; ok {
		f = p
	}
	if strings.Contains(f, "%") && !strings.Contains(f, "$") {
		nf, err := fromApache(f)
		if err != nil {
			return nil, err
		}
		f = nf
	}
	fm := &Format{Source: f, has: map[role]bool{}}
	for i := 0; i < len(f); {
		if f[i] != '$' {
			j := strings.IndexByte(f[i:], '$')
			if j < 0 {
				j = len(f) - i
			}
			fm.toks = append(fm.toks, token{lit: []byte(f[i : i+j])})
			i += j
			continue
		}
		var name string
		if strings.HasPrefix(f[i:], "${") {
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				return nil, fmt.Errorf("log format %q: unclosed ${", f)
			}
			name = f[i+2 : i+end]
			i += end + 1
		} else {
			j := i + 1
			for j < len(f) && (f[j] >= 'a' && f[j] <= 'z' || f[j] >= 'A' && f[j] <= 'Z' || f[j] >= '0' && f[j] <= '9' || f[j] == '_') {
				j++
			}
			name = f[i+1 : j]
			i = j
		}
		if name == "" {
			return nil, fmt.Errorf("log format %q: $ without a variable name", f)
		}
		if n := len(fm.toks); n > 0 && fm.toks[n-1].name != "" {
			return nil, fmt.Errorf("log format %q: variables $%s and $%s are not separated by text, so their values cannot be told apart", f, fm.toks[n-1].name, name)
		}
		r := varRoles[name]
		if r != roleIgnore && fm.has[r] {
			r = roleIgnore // a second variable of the same meaning: keep the first
		}
		fm.has[r] = true
		fm.toks = append(fm.toks, token{name: name, role: r})
	}
	return fm, nil
}

// uses reports whether the format holds a variable of role r.
func (f *Format) uses(r role) bool { return f.has[r] }

// matchInto splits line into the values of the format's variables, stored
// by role in vals (a slice of length numRoles, reused between calls). It
// returns an error text for a line that does not fit.
func (f *Format) matchInto(line []byte, vals [][]byte) string {
	for i := range vals {
		vals[i] = nil
	}
	pos := 0
	for i, t := range f.toks {
		if t.name == "" {
			if !bytes.HasPrefix(line[pos:], t.lit) {
				return fmt.Sprintf("expected %q at column %d", t.lit, pos+1)
			}
			pos += len(t.lit)
			continue
		}
		end := len(line)
		if i+1 < len(f.toks) {
			next := f.toks[i+1].lit
			k := bytes.Index(line[pos:], next)
			if k < 0 {
				return fmt.Sprintf("no %q after $%s", next, t.name)
			}
			end = pos + k
		}
		if t.role != roleIgnore {
			vals[t.role] = line[pos:end]
		}
		pos = end
	}
	if pos != len(line) {
		return "text after the last field"
	}
	return ""
}

const numRoles = int(roleService) + 1
