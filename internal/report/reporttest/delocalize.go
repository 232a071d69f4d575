package reporttest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// numberRun is a run of digits with the separators between them.
var numberRun = regexp.MustCompile(`\d[\d.,]*\d|\d`)

// danishThousands is a whole number with dots between groups of three.
var danishThousands = regexp.MustCompile(`^\d{1,3}(\.\d{3})+$`)

// Delocalize rewrites the numbers of a report written in lang ("da":
// decimal comma, thousands with a dot) the English way ("1.234,5" →
// "1,234.5", "0,42" → "0.42"), so the truth checks, which read English
// figures, read a Danish report's figures as they are meant. Text that is
// not a number of that shape (dates, versions such as "1.0.2") stays.
// English ("" or "en") is returned as is.
func Delocalize(text []byte, lang string) []byte {
	if lang == "" || lang == "en" {
		return text
	}
	// The Danish unit of a throughput is read as the English one, so the
	// checks that compare throughputs ("… (19,9 kald/s)") read it too.
	text = bytes.ReplaceAll(text, []byte(" kald/s"), []byte(" req/s"))
	return numberRun.ReplaceAllFunc(text, func(b []byte) []byte {
		s := string(b)
		hasDot, hasComma := strings.Contains(s, "."), strings.Contains(s, ",")
		switch {
		case hasDot && hasComma:
			if strings.LastIndex(s, ",") < strings.LastIndex(s, ".") {
				return b // not Danish-shaped (a list "1,2.3"?): leave it
			}
		case hasComma:
			if strings.Count(s, ",") > 1 {
				return b
			}
		case hasDot:
			if !danishThousands.MatchString(s) {
				return b
			}
		default:
			return b
		}
		return []byte(strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return ','
			case ',':
				return '.'
			}
			return r
		}, s))
	})
}

// htmlLang finds report.html's language.
var htmlLang = regexp.MustCompile(`<html lang="([a-zA-Z-]+)"`)

// runLang is the report language a run directory records (run.json
// context.lang); "" is English.
func runLang(runJSON []byte) string {
	var info struct {
		Context *struct {
			Lang string `json:"lang"`
		} `json:"context"`
	}
	if json.Unmarshal(runJSON, &info) != nil || info.Context == nil {
		return ""
	}
	return strings.ToLower(info.Context.Lang)
}
