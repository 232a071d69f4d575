package accesslog

import "bytes"

// IDSegment replaces path segments that identify a resource rather than an
// endpoint.
const IDSegment = "{id}"

// AppendTemplate appends path without its query string, with every segment
// that looks like an identifier replaced by IDSegment, so that
// "/patients/0101701234/allergies?x=1" and "/patients/0202802345/allergies"
// share the label "/patients/{id}/allergies". A segment is an identifier
// when it is all digits, a UUID, or a token of 8 or more letters and digits
// holding at least two digits and one letter that is not a word (hex ids,
// base64-like keys).
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

func isID(seg []byte) bool {
	if len(seg) == 0 {
		return false
	}
	digits, letters, other := 0, 0, 0
	for _, c := range seg {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			letters++
		case c == '-' || c == '_' || c == '.' || c == '%' || c == '=' || c == '~':
			other++
		default:
			return false
		}
	}
	switch {
	case digits == len(seg):
		return true
	case len(seg) == 36 && seg[8] == '-' && seg[13] == '-' && seg[18] == '-' && seg[23] == '-':
		return true
	case digits > 0 && other > 0 && digits+other == len(seg): // 2019-05-13, 10-01-70
		return true
	case len(seg) >= 8 && digits >= 2 && letters >= 1 && bytes.IndexByte(seg, '.') < 0:
		return true
	}
	return false
}
