package reporttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnglishStopList are common English words and plateau's own English
// terms that a document in another language should not hold outside code
// and names: each is matched case-insensitively, the short words with
// spaces around them so that a Danish word containing them ("andel",
// "offentlig") does not match.
var EnglishStopList = []string{" the ", " and ", " of ", " with ", " from ", " which ", " is not ", " was ",
	"requests", "response time", "throughput stopped", "per second", "whole run", "no data", "not measured"}

// EnglishLeft reads an HTML document as a reader does — every paragraph,
// list item, heading, caption, table cell and chart text (SVG <text>) —
// and returns, for each text that holds a word of stop, the word and the
// text ("“ the ” in: …"). Code is not prose: <code>, <pre>, <script>
// and <style> are skipped, and so are the parts of a text the caller
// names as kept as written (plan names, labels, paths, quoted server
// messages), removed before the words are looked for.
func EnglishLeft(doc []byte, stop []string, kept []string) ([]string, error) {
	texts, err := HTMLTexts(doc)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range texts {
		s = strings.Join(strings.Fields(s), " ")
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		probe := " " + s + " "
		for _, k := range kept {
			if k != "" {
				probe = strings.ReplaceAll(probe, k, " ")
			}
		}
		lower := strings.ToLower(probe)
		for _, w := range stop {
			if strings.Contains(lower, strings.ToLower(w)) {
				out = append(out, fmt.Sprintf("%q in: %s", strings.TrimSpace(w), s))
				break
			}
		}
	}
	return out, nil
}

// namedKeys are the summary.json fields that hold names a user, a plan,
// a monitor or a server gave, and error classes (summary.json's
// enumeration, "timeout", "http_5xx"): kept as written in any language.
var namedKeys = map[string]bool{"name": true, "label": true, "message": true, "class": true, "workload": true, "phase": true, "phases": true,
	"target": true, "server": true, "servers": true, "component": true}

// Names returns the names a run directory's summary.json and run.json
// hold — labels, workloads, phases, targets, servers, error messages —
// longest first, for EnglishLeft's kept: a label "list allergies" or a
// server's "Service Unavailable from upstream" is the run's own text,
// not the report's. A file missing is skipped; one that does not parse
// is an error.
func Names(dir string) ([]string, error) {
	set := map[string]bool{}
	var walk func(v any, named bool)
	walk = func(v any, named bool) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, namedKeys[k])
			}
		case []any:
			for _, e := range x {
				walk(e, named)
			}
		case string:
			if named && len(x) > 2 {
				set[x] = true
			}
		}
	}
	for _, f := range []string{"summary.json", "run.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		walk(v, false)
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out, nil
}
