package study

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
)

// Notes are hand-written findings and recommendations (--notes FILE):
// a Markdown file whose "## Findings" and "## Recommendations" sections
// hold paragraphs or "- " items, each one entry.
type Notes struct {
	Findings, Recommendations []string
}

// LoadNotes reads a notes file. Text outside those two sections is an
// error naming its line, so nothing written is silently dropped.
func LoadNotes(path string) (*Notes, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading notes: %w", err)
	}
	return ParseNotes(path, src)
}

// ParseNotes parses a notes file's bytes; path is used in errors.
func ParseNotes(path string, src []byte) (*Notes, error) {
	n := &Notes{}
	var cur *[]string
	var para []string
	flush := func() {
		if len(para) > 0 && cur != nil {
			*cur = append(*cur, strings.Join(para, " "))
		}
		para = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		t := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(t, "#"):
			flush()
			h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "#")))
			switch {
			case strings.HasPrefix(h, "finding"):
				cur = &n.Findings
			case strings.HasPrefix(h, "recommendation"):
				cur = &n.Recommendations
			default:
				return nil, fmt.Errorf("%s:%d: heading %q: notes have two sections, ## Findings and ## Recommendations", path, line, t)
			}
		case t == "":
			flush()
		case cur == nil:
			return nil, fmt.Errorf("%s:%d: text before ## Findings or ## Recommendations", path, line)
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* "):
			flush()
			para = []string{strings.TrimSpace(t[2:])}
		default:
			para = append(para, t)
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}
