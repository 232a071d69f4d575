package core

// ReadableExcerpt reports whether bytes a server sent read as text worth
// quoting in a failure message ("SSH-2.0-OpenSSH_9.2", "HTTP/1.1 2000 OK"):
// printable ASCII only, and four characters or more or a letter among them.
// Anything else — binary, non-ASCII, a scrap such as `|\` from a server
// that speaks no HTTP — differs from failure to failure, so a message shows
// it as "(binary data)" and such failures group into one.
func ReadableExcerpt(b []byte) bool {
	letter := false
	for _, c := range b {
		if c < 0x20 && c != '\t' || c >= 0x7f {
			return false
		}
		letter = letter || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
	}
	return len(b) >= 4 || letter
}
