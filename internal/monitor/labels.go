package monitor

import "strings"

// LabelValue makes a label value safe inside a metric name: letters,
// digits and _ . : / + - are kept, anything else (quotes, commas, braces,
// '=', spaces) becomes '_', so names never need CSV quoting and parse back
// unambiguously.
func LabelValue(v string) string {
	ok := true
	for i := 0; i < len(v); i++ {
		if !labelByte(v[i]) {
			ok = false
			break
		}
	}
	if ok {
		return v
	}
	b := []byte(v)
	for i, c := range b {
		if !labelByte(c) {
			b[i] = '_'
		}
	}
	return string(b)
}

func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '-'
}

// MetricName joins a base name and label pairs (key, value, key, value…)
// as name{key=value,...}, in the order given, values made safe with
// LabelValue. Without labels it is the bare name.
func MetricName(name string, kv ...string) string {
	if len(kv) < 2 {
		return name
	}
	var sb strings.Builder
	sb.WriteString(name)
	sb.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(kv[i])
		sb.WriteByte('=')
		sb.WriteString(LabelValue(kv[i+1]))
	}
	sb.WriteByte('}')
	return sb.String()
}
