package metrics

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	// The local end of a connection, "addr:port->" in Go's net.OpError
	// text ("read tcp 127.0.0.1:54321->127.0.0.1:8080: …"): its ephemeral
	// port differs on every connection.
	localRe = regexp.MustCompile(`(?:\[[0-9A-Fa-f:.%a-zA-Z]*\]|\b\d{1,3}(?:\.\d{1,3}){3})(?::\d{1,5})?->`)
	// A Go-quoted excerpt ("…" with escapes) in a message.
	quotedRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// NormalizeMessage makes failure messages that differ only by ephemeral
// detail equal, so that failures group by what happened: the local address
// and ephemeral port of a connection are taken out ("read tcp
// 127.0.0.1:54321->127.0.0.1:8080: read: connection reset by peer" becomes
// "read tcp 127.0.0.1:8080: read: connection reset by peer"; the remote
// address stays, it names the server), and a quoted excerpt of non-text
// bytes (a protocol error quoting what the server sent) becomes "(binary
// data)". Readable quotes stay. A message with nothing to normalise is
// returned as is, without allocating. It is the one home of the rule: the
// engine and every importer group failures through Agg.AddError, which
// applies it.
func NormalizeMessage(m string) string {
	if m == "" {
		return m
	}
	// Removing one local end can join the text around it into another
	// ("[]-[]->>" → "[]->"): repeat until none is left, so that a
	// normalised message normalises to itself. Each round shortens m.
	for mayHoldAddr(m) && strings.Contains(m, "->") {
		n := localRe.ReplaceAllString(m, "")
		if n == m {
			break
		}
		m = n
	}
	if strings.Contains(m, `"`) && strings.Contains(m, `\`) {
		m = quotedRe.ReplaceAllStringFunc(m, func(q string) string {
			if binaryQuote(q) {
				return "(binary data)"
			}
			return q
		})
	}
	return m
}

// mayHoldAddr is a cheap test before the expression: an address needs a
// digit followed by a dot, or a bracket.
func mayHoldAddr(m string) bool {
	for i := 0; i+1 < len(m); i++ {
		if m[i] == '[' || m[i] >= '0' && m[i] <= '9' && m[i+1] == '.' {
			return true
		}
	}
	return false
}

// binaryQuote reports whether a quoted excerpt holds bytes outside
// printable ASCII: what a server that speaks no HTTP sends, which differs
// from failure to failure. Readable text ("SSH-2.0-OpenSSH_9.2") stays.
func binaryQuote(q string) bool {
	s, err := strconv.Unquote(q)
	if err != nil {
		return strings.Contains(q, `\x`)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c >= 0x7f {
			return true
		}
	}
	return false
}
