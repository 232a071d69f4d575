package reporttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/plateau-perf/plateau/internal/locale"
)

// catalogueVerb is a fmt verb of a catalogue key.
var catalogueVerb = regexp.MustCompile(`%[-+#0 ]*[0-9]*(?:\.[0-9]+)?[a-zA-Z%]`)

// wordRE is a word as the English-word scan reads one: letters, with
// the identifiers' joiners (response_time, backend=lar-1, p95) kept in
// so that a name written as code is one token, not English words.
var wordRE = regexp.MustCompile(`[\p{L}\p{N}_=./:@-]*\p{L}[\p{L}\p{N}_=./:@'’-]*`)

// sharedWords are words of the catalogue's English keys that a document
// in another language writes as they are: Danish performance vocabulary
// (reference 000 writes "performance", "nodes", "heap"), units,
// abbreviations and plateau's own names.
var sharedWords = map[string]bool{"prometheus": true, "promql": true, "cloudwatch": true, "postgresql": true, "mysql": true,
	"mariadb": true, "jmeter": true, "gatling": true, "locust": true, "kubernetes": true}

// CatalogueEnglish returns the English words a document in lang must not
// hold outside code and names: every word of a catalogue key whose
// translation differs from it, less the words any translation of the
// language uses (a word both languages write, "status", "label", "CPU",
// is no sign of English). Words are lower case, three letters or more.
// English has no such words: nil.
func CatalogueEnglish(lang string) map[string]bool {
	cat := locale.Catalogue(lang)
	if cat == nil {
		return nil
	}
	words := func(s string) []string {
		var out []string
		for _, w := range wordRE.FindAllString(catalogueVerb.ReplaceAllString(s, " "), -1) {
			w = strings.ToLower(strings.Trim(w, "_=./:@'’-"))
			if len([]rune(w)) >= 3 && !strings.ContainsAny(w, "_=./:@0123456789") {
				out = append(out, w)
			}
		}
		return out
	}
	native := map[string]bool{}
	for _, v := range cat {
		for _, w := range words(v) {
			native[w] = true
		}
	}
	out := map[string]bool{}
	for k, v := range cat {
		if k == v {
			continue
		}
		for _, w := range words(k) {
			if !native[w] && !sharedWords[w] {
				out[w] = true
			}
		}
	}
	return out
}

// EnglishWordsLeft returns, for each text that holds one of words outside
// the parts named in kept (names kept as written, removed first), the
// English words found and the text ("[the, requests] in: …"). A word is a
// whole token: an identifier joined by _ = . / : or - (response_time,
// backend=lar-1, /tmp/x.log) is one token and never English prose.
func EnglishWordsLeft(texts []string, words map[string]bool, kept []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range texts {
		s = strings.Join(strings.Fields(s), " ")
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		probe := " " + s + " "
		for _, k := range longestFirst(kept) {
			probe = removeName(probe, k)
		}
		var found []string
		for _, w := range wordRE.FindAllString(probe, -1) {
			lw := strings.ToLower(strings.Trim(w, "_=./:@'’-"))
			if strings.ContainsAny(lw, "_=./:@0123456789") {
				continue
			}
			if words[lw] && !slicesContains(found, lw) {
				found = append(found, lw)
			}
		}
		if len(found) > 0 {
			out = append(out, fmt.Sprintf("[%s] in: %s", strings.Join(found, ", "), s))
		}
	}
	return out
}

// removeName removes every occurrence of name from s that stands as
// words of its own: a run named "run" leaves "sprunget" whole.
func removeName(s, name string) string {
	if name == "" {
		return s
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	first, _ := utf8.DecodeRuneInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	var b strings.Builder
	for {
		i := strings.Index(s, name)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(name):])
		if (i > 0 && isWord(first) && isWord(before)) || (i+len(name) < len(s) && isWord(last) && isWord(after)) {
			b.WriteString(s[:i+len(name)])
		} else {
			b.WriteString(s[:i] + " ")
		}
		s = s[i+len(name):]
	}
}

// longestFirst orders names longest first, so that a name holding
// another ("1: 2 nodes" in a requirement naming it) is removed whole.
func longestFirst(kept []string) []string {
	out := append([]string(nil), kept...)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func slicesContains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// HTMLTexts reads an HTML document as a reader does: the text of every
// paragraph, list item, heading, caption, table cell and chart text (SVG
// <text>), each block on its own; code (<code>, <pre>, <script>,
// <style>) is left out.
func HTMLTexts(doc []byte) ([]string, error) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	var out []string
	var text func(n *html.Node, sb *strings.Builder)
	text = func(n *html.Node, sb *strings.Builder) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				sb.WriteString(c.Data)
			case c.Type == html.ElementNode && (c.Data == "code" || c.Data == "pre" || c.Data == "script" || c.Data == "style"):
				sb.WriteString(" ")
			case c.Type == html.ElementNode && readBlocks[c.Data]:
				sb.WriteString(" ")
			case c.Type == html.ElementNode:
				text(c, sb)
			}
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "code", "pre", "script", "style":
				return
			}
			if readBlocks[n.Data] {
				var sb strings.Builder
				text(n, &sb)
				out = append(out, sb.String())
			}
			// An image's alternative text and an element's title are
			// read too.
			for _, a := range n.Attr {
				if a.Key == "alt" || a.Key == "title" || a.Key == "aria-label" {
					out = append(out, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out, nil
}

// readBlocks are the elements whose text a reader reads as one piece.
var readBlocks = map[string]bool{"p": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true, "caption": true, "figcaption": true,
	"td": true, "th": true, "text": true, "title": true, "dt": true, "dd": true, "summary": true, "div": true, "a": false}

// MarkdownTexts reads a Markdown document as a reader does: each line
// outside fenced code, with inline code spans left out and Markdown's
// escapes and entities undone.
func MarkdownTexts(md string) []string {
	var out []string
	in := false
	unesc := strings.NewReplacer(`\_`, "_", `\~`, "~", `\*`, "*", `\#`, "#", `\|`, "|", `\[`, "[", `\]`, "]", "&lt;", "<", "&gt;", ">", "&amp;", "&")
	code := regexp.MustCompile("`[^`]*`|<[a-zA-Z/][^>]*>")
	link := regexp.MustCompile(`\]\([^)]*\)`)
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if in {
			continue
		}
		l = link.ReplaceAllString(code.ReplaceAllString(l, " "), "]")
		out = append(out, unesc.Replace(l))
	}
	return out
}

// SortedWords lists a word set in order (for a test's message).
func SortedWords(ws map[string]bool) []string {
	out := make([]string, 0, len(ws))
	for w := range ws {
		out = append(out, w)
	}
	sort.Strings(out)
	return out
}

// KeptNames are what a document in any language writes as recorded, for
// EnglishWordsLeft's kept: the run's own names (Names), its requirements
// as the plan wrote them (summary.json sla[].expr) and the HTTP reason
// phrases ("Internal Server Error") a status is quoted with.
func KeptNames(dir string) ([]string, error) {
	names, err := Names(dir)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, err
	}
	var s struct {
		SLA []struct {
			Expr string `json:"expr"`
		} `json:"sla"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	for _, r := range s.SLA {
		names = append(names, r.Expr)
	}
	for code := 100; code < 600; code++ {
		if txt := http.StatusText(code); txt != "" {
			names = append(names, txt)
		}
	}
	return names, nil
}

// CPUStates are the CPU states a chart's legend names as /proc does
// (kept as written in any language): a text that is one of them alone is
// a legend entry, not prose.
var CPUStates = map[string]bool{"user": true, "system": true, "iowait": true, "steal": true, "idle": true, "nice": true}

// Prose drops the texts that are a CPU state's legend entry alone.
func Prose(texts []string) []string {
	var out []string
	for _, x := range texts {
		if !CPUStates[strings.TrimSpace(x)] {
			out = append(out, x)
		}
	}
	return out
}
