package accesslog

import "bytes"

// IDSegment replaces path segments that identify a resource rather than an
// endpoint.
const IDSegment = "{id}"

// AppendTemplate appends path without its query string, with every segment
// that looks like an identifier replaced by IDSegment, so that
// "/patients/0101701234/allergies?x=1" and "/patients/0202802345/allergies"
// share the label "/patients/{id}/allergies". Only segments that look like
// ids become {id} (see isID): numbers, UUIDs, hex strings, dates and long
// opaque tokens. Names stay as written, even when they hold digits or
// escapes: "/A%20Beka%20G1%20Howe/029_AND_30/" keeps both segments.
func AppendTemplate(dst, path []byte) []byte {
	if i := bytes.IndexAny(path, "?#"); i >= 0 {
		path = path[:i]
	}
	if len(path) == 0 {
		return append(dst, '/')
	}
	for len(path) > 0 {
		i := bytes.IndexByte(path, '/')
		var seg []byte
		if i < 0 {
			seg, path = path, nil
		} else {
			seg, path = path[:i], path[i+1:]
		}
		if isID(seg) {
			dst = append(dst, IDSegment...)
		} else {
			dst = append(dst, seg...)
		}
		if i >= 0 {
			dst = append(dst, '/')
		}
	}
	return dst
}

// isID reports whether a path segment identifies a resource rather than
// naming an endpoint:
//
//   - a number: all digits ("0101701234");
//   - a UUID: 36 characters, hex in 8-4-4-4-12 groups;
//   - hex: 8 or more hex digits holding at least one digit ("9a8b7c6d5e4f");
//   - a date or numeric code: digits with - _ . : separators only
//     ("2019-05-13", "10-01-70");
//   - an opaque token: 16 or more letters, digits, - and _ with at least
//     two digits, one letter, and no word separated by - or _ from a
//     number-free part ("eyJhbGciOiJIUzI1NiJ9", "aZ3kP9qLm2Xc7VbN"), or 8 or
//     more letters and digits alone with at least two of each kind mixed
//     ("ab12cd34ef").
//
// A segment with a percent escape, a space or any other character is a
// name ("A%20Beka%20G1%20Howe"), as is one that mixes words and numbers
// with separators ("029_AND_30", "v2-beta").
func isID(seg []byte) bool {
	if len(seg) == 0 {
		return false
	}
	digits, letters, hex, seps := 0, 0, 0, 0
	for _, c := range seg {
		switch {
		case c >= '0' && c <= '9':
			digits++
			hex++
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
			letters++
			hex++
		case c >= 'g' && c <= 'z' || c >= 'G' && c <= 'Z':
			letters++
		case c == '-' || c == '_' || c == '.' || c == ':':
			seps++
		default:
			return false // %, space, +, ~, =: a name, not an id
		}
	}
	n := len(seg)
	switch {
	case digits == n:
		return true
	case n == 36 && seg[8] == '-' && seg[13] == '-' && seg[18] == '-' && seg[23] == '-' && hex == 32:
		return true
	case hex == n && n >= 8 && digits >= 1:
		return true
	case letters == 0 && digits > 0: // 2019-05-13, 10-01-70, 1.2.3
		return true
	case seps == 0 && n >= 8 && digits >= 2 && letters >= 2 && mixed(seg):
		return true
	case n >= 16 && digits >= 2 && letters >= 1 && bytes.IndexByte(seg, '.') < 0 && bytes.IndexByte(seg, ':') < 0 && !hasWordPart(seg):
		return true
	}
	return false
}

// mixed reports whether letters and digits alternate at least three times
// ("ab12cd34": an opaque key), unlike a word followed by a number ("page12").
func mixed(seg []byte) bool {
	changes := 0
	for i := 1; i < len(seg); i++ {
		a, b := seg[i-1] >= '0' && seg[i-1] <= '9', seg[i] >= '0' && seg[i] <= '9'
		if a != b {
			changes++
		}
	}
	return changes >= 3
}

// hasWordPart reports whether a - or _ separated part of seg is a run of
// letters only, like "AND" in "029_AND_30" (a name made of words).
func hasWordPart(seg []byte) bool {
	if bytes.IndexAny(seg, "-_") < 0 {
		return false
	}
	for _, part := range bytes.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' }) {
		word := true
		for _, c := range part {
			if c >= '0' && c <= '9' {
				word = false
				break
			}
		}
		if word {
			return true
		}
	}
	return false
}
