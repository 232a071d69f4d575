package report

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every sentence the report writes is built here from its clauses, so a
// missing value drops its clause instead of leaving an empty slot ("in .")
// or dangling punctuation ("…; ."). Sections gather clauses; only these
// functions join and punctuate them.

// clause cleans one clause: surrounding space and trailing separators go.
func clause(c string) string {
	return strings.TrimRight(strings.TrimSpace(c), " ;,:")
}

// clauses joins the non-empty clauses with "; ", without finishing the
// sentence (for evidence that is embedded in a longer one).
func clauses(cs ...string) string {
	var kept []string
	for _, c := range cs {
		if c = clause(c); c != "" {
			kept = append(kept, c)
		}
	}
	return strings.Join(kept, "; ")
}

// sentence finishes a sentence from its clauses: empty ones are dropped,
// the rest joined with "; ", the first letter capitalised and one full
// stop added (none after "." "!" "?" or a closing quote that follows one).
// It returns "" when every clause is empty.
func sentence(cs ...string) string {
	s := clauses(cs...)
	if s == "" {
		return ""
	}
	return finish(upperFirst(s))
}

// finish ends text with one full stop.
func finish(s string) string {
	s = strings.TrimRight(s, " ;,:")
	if s == "" {
		return ""
	}
	switch r, _ := utf8.DecodeLastRuneInString(s); r {
	case '.', '!', '?', '…':
		return s
	}
	return s + "."
}

// sentences joins finished sentences with one space, dropping empty ones.
func sentences(ss ...string) string {
	var kept []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			kept = append(kept, finish(upperFirst(s)))
		}
	}
	return strings.Join(kept, " ")
}

// upperFirst capitalises the first letter, unless the first word is an
// identifier written as the system names it (lb_connections, a metric or
// column name): "Lb_connections" is no one's word.
func upperFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	if w, _, _ := strings.Cut(s, " "); strings.ContainsRune(w, '_') {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// Sentence is sentence for other document builders (internal/study), so
// every document's sentences are finished by the same rule.
func Sentence(cs ...string) string { return sentence(cs...) }

// Clauses is clauses for other document builders.
func Clauses(cs ...string) string { return clauses(cs...) }

// Sentences is sentences for other document builders.
func Sentences(ss ...string) string { return sentences(ss...) }
