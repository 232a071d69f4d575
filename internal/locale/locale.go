// Package locale is the language a report or study document is written
// in: its fixed text comes from a message catalogue (golang.org/x/text/
// message and message/catalog) and its numbers and dates are formatted as
// the language writes them (Danish: decimal comma, thousands with a dot).
//
// English is the source language: a message's key is its English text (a
// fmt format), so an English document is the key formatted with
// fmt.Sprintf, byte for byte as before the catalogue. Every other language
// has its translations in the catalogue (da.go); a key without one reads in
// English. A nil *Locale is English, so a zero options struct keeps
// writing English.
//
// A Locale is immutable and safe for concurrent use; there is no package
// state but the catalogue, which is built once and only read.
package locale

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"golang.org/x/text/message/catalog"
	"golang.org/x/text/number"
)

// Locale is one language of the documents.
type Locale struct {
	name string
	tag  language.Tag
	p    *message.Printer
	// dec and group are the language's decimal and thousands separators,
	// read from CLDR through the printer.
	dec, group rune
	// dateTime and clock are the layouts of a wall time and of a time of
	// day.
	dateTime, clock string
	// months are the month names a chart's day tick writes.
	months *[12]string
}

// language describes one supported language.
type lang struct {
	name  string
	tag   language.Tag
	trans map[string]string
	// dateTime is how the language's reports write a wall time: reference
	// 000 (Danish) writes its iterations' start and end year first
	// ("2019-05-13_11-10-14"), so Danish keeps the year-first order.
	dateTime, clock string
	// months are the short month names of a chart's day tick (nil: the
	// English month-day digits).
	months *[12]string
}

var langs = []lang{
	{name: "en", tag: language.English, dateTime: "2006-01-02 15:04:05", clock: "15:04:05"},
	{name: "da", tag: language.Danish, trans: da, dateTime: "2006-01-02 15:04:05", clock: "15:04:05", months: &daMonths},
}

// cat is the message catalogue: every language's translations.
var cat = func() catalog.Catalog {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	for _, l := range langs {
		for k, v := range l.trans {
			if err := b.SetString(l.tag, k, v); err != nil {
				panic(fmt.Sprintf("locale: catalogue entry %q: %v", k, err)) // programmer error, found by the tests
			}
		}
	}
	return b
}()

// Names lists the languages available, by the name --lang and lang: take.
func Names() []string {
	out := make([]string, len(langs))
	for i, l := range langs {
		out[i] = l.name
	}
	return out
}

// Parse returns the locale named name ("en", "da"; a region such as
// "da-DK" or "en_GB" is accepted and dropped; case does not matter). ""
// is English. An unknown name is an error naming it and the languages
// available.
func Parse(name string) (*Locale, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "" {
		n = "en"
	}
	if i := strings.IndexAny(n, "-_"); i > 0 {
		n = n[:i]
	}
	i := slices.IndexFunc(langs, func(l lang) bool { return l.name == n })
	if i < 0 {
		return nil, fmt.Errorf("unknown language %q (available: %s)", name, strings.Join(Names(), ", "))
	}
	l := langs[i]
	loc := &Locale{name: l.name, tag: l.tag, p: message.NewPrinter(l.tag, message.Catalog(cat)), dateTime: l.dateTime, clock: l.clock, months: l.months}
	// The separators as CLDR has them for the language: 1234.5 is
	// "1,234.5" in English, "1.234,5" in Danish.
	probe := []rune(loc.p.Sprint(number.Decimal(1234.5, number.Scale(1))))
	loc.group, loc.dec = ',', '.'
	if len(probe) == 7 {
		loc.group, loc.dec = probe[1], probe[5]
	}
	return loc, nil
}

// MustParse is Parse for names known to exist (tests, defaults).
func MustParse(name string) *Locale {
	l, err := Parse(name)
	if err != nil {
		panic(err)
	}
	return l
}

// Check returns nil when name is a language available, or the error Parse
// gives.
func Check(name string) error {
	_, err := Parse(name)
	return err
}

// Name is the language's short name ("en", "da").
func (l *Locale) Name() string {
	if l == nil {
		return "en"
	}
	return l.name
}

// English reports whether the locale writes English.
func (l *Locale) English() bool { return l == nil || l.name == "en" }

// T returns the message key in the locale's language with args filled in
// (key is a fmt format in English). In English it is fmt.Sprintf(key,
// args...); in another language the catalogue's translation, formatted by
// the language's printer, which writes numeric arguments as the language
// does.
func (l *Locale) T(key string, args ...any) string {
	if l.English() {
		if len(args) == 0 {
			return key
		}
		return fmt.Sprintf(key, args...)
	}
	return l.p.Sprintf(key, args...)
}

// Word returns key, a message without arguments (a heading, a column
// name, a word), in the locale's language.
func (l *Locale) Word(key string) string {
	if l.English() {
		return key
	}
	if t, ok := l.trans()[key]; ok {
		return t
	}
	return key
}

// trans is the language's translations.
func (l *Locale) trans() map[string]string {
	for _, x := range langs {
		if x.name == l.name {
			return x.trans
		}
	}
	return nil
}

// Has reports whether key has a translation in the locale's language
// (English has every key).
func (l *Locale) Has(key string) bool {
	if l.English() {
		return true
	}
	_, ok := l.trans()[key]
	return ok
}

// Num rewrites a number formatted the English way ("1,234.5", "−0.42")
// with the language's separators ("1.234,5" in Danish). Only the
// separators change; signs, digits and anything around them stay.
func (l *Locale) Num(s string) string {
	if l.English() || (l.dec == '.' && l.group == ',') {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	for _, r := range s {
		switch r {
		case '.':
			b.WriteRune(l.dec)
		case ',':
			b.WriteRune(l.group)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Decimal is the language's decimal separator.
func (l *Locale) Decimal() rune {
	if l.English() {
		return '.'
	}
	return l.dec
}

// Group is the language's thousands separator.
func (l *Locale) Group() rune {
	if l.English() {
		return ','
	}
	return l.group
}

// DateTime formats a wall time as the language's reports write it; "–"
// for the zero time.
func (l *Locale) DateTime(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	if l == nil {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format(l.dateTime)
}

// Clock formats a time of day; "–" for the zero time.
func (l *Locale) Clock(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	if l == nil {
		return t.Format("15:04:05")
	}
	return t.Format(l.clock)
}

// daMonths are the Danish months as a chart's tick writes them.
var daMonths = [12]string{"jan", "feb", "mar", "apr", "maj", "jun", "jul", "aug", "sep", "okt", "nov", "dec"}

// DayClock formats a day and a time of day short, for a chart's tick over
// several days: "01-02 15:04" in English, "2. jan 15:04" in Danish (day,
// month name, as a Danish reader writes a date).
func (l *Locale) DayClock(t time.Time) string {
	if l.English() || l.months == nil {
		return t.Format("01-02 15:04")
	}
	return fmt.Sprintf("%d. %s %s", t.Day(), l.months[t.Month()-1], t.Format("15:04"))
}

// And joins words as the language lists them: "a, b and c" ("a, b og c").
func (l *Locale) And(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " " + l.Word("and") + " " + ws[len(ws)-1]
}

// Lang is the value of an HTML lang attribute ("en", "da").
func (l *Locale) Lang() string { return l.Name() }

// validKey is used by the tests: a key is valid UTF-8 and not empty.
func validKey(k string) bool { return k != "" && utf8.ValidString(k) }

// Catalogue returns a copy of the translations of the language named
// name (nil for English, whose keys are its text, and for a name not
// available): the tests derive from it the English words a document in
// that language must not hold.
func Catalogue(name string) map[string]string {
	for _, l := range langs {
		if l.name == name && l.trans != nil {
			out := make(map[string]string, len(l.trans))
			for k, v := range l.trans {
				out[k] = v
			}
			return out
		}
	}
	return nil
}
