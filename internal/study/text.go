package study

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/locale"
)

// The study document's fixed text, in one place: every sentence pattern
// the answers, the banner and the sections use is here, so that a message
// catalogue (issue 32, item 7: the report's language) can take them over
// without touching the analysis. The patterns are fmt formats; their
// arguments are numbers and names computed by the analysis.
type textT struct {
	// Questions in words, by kind.
	QRelease, QReleaseAny, QCapacity, QCapacityOf, QConfigurations, QRepeatability, QRepeatabilityOf, QSoak, QInterference string

	// Study status.
	StatusPassed, StatusFailed, StatusInconclusive string
	WhyFailed, WhyInconclusive, WhyPassed          string
	NoQuestions                                    string

	// Release comparison.
	RelRow, RelLabelRow, RelAnswer, RelNoPairs, RelFailed, RelHeld, RelHeldJudged, RelTooFew, RelSuspect, RelStarved, RelNoise string

	// Capacity.
	CapWithin, CapSearch, SearchProbes, CapWithinFrom, CapWithinAt, CapNoneWithin, CapNoSLA, CapKnee, CapNoKnee, CapGenerator, CapLimit, CapLimitNear, CapComponent, CapBusiest, CapNothing string
	CapFewLevels, CapMinLoadFailed, CapMinLoadDisputed, CapMinLoadHeld, CapStarved, CapAtLowest, CapMostFrequent                                                                            string
	CapLimitCounted, CapKneeStarved, CapNoKneeStarved                                                                                                                                       string

	// Configurations.
	CfgAnswer, CfgRow, CfgNone, CfgPeak, CfgKnee, CfgKneeBetween, CfgNoKnee, CfgWithin, CfgNoneWithin, CfgFromSearch string

	// Repeatability.
	RepAnswer, RepAnswerOf, RepNoWorkload, RepOutlier, RepOutlierGen, RepWithout, RepNone, RepExceeds, RepHolds, RepThroughGen, RepInvalid, RepWithoutInvalid, RepThroughInvalid string

	// Soak.
	SoakStable, SoakDrifting, SoakLabel, SoakNoise, SoakMemory, SoakMemoryGrew, SoakIndicative, SoakNone string

	// Interference.
	IntNone, IntStarved, IntNotStarved, IntRun, IntCPU, IntWork, IntWorst, IntInvalid, IntInvalidAll string

	// Validity banner.
	BannerTitle, BannerGenerator, BannerLoad, BannerOutlier, BannerMark, BannerMore, BannerMoreOne, BannerOffTrend string

	// Confidence.
	ConfHigh, ConfLow, ConfIndicative string

	// Words.
	KindRelease, KindSoak, TheCandidate, NoChange, CapNotHeldAt, CfgGenerator, RepNoGroup, IntNoneRaised, IntGenerator string

	// Lines and notes of the document.
	StatusLine, ConfidenceLine, NoteCompared, NoteSignificance, NoteNoMonitor, NoteOutlier, NoteInferred, NoteMarkRun, NoteMarkLoad string
}

// english is the study's fixed text in English: each pattern is also its
// key in the message catalogue (internal/locale), which holds its
// translations.
var english = textT{
	QRelease:         "Is %s slower than %s at any matching workload and load (by more than %s)?",
	QReleaseAny:      "Is the candidate slower than the baseline at any matching workload and load (by more than %s)?",
	QCapacity:        "What is the highest load that meets the requirements, per workload, where does throughput stop growing, and what limits it?",
	QCapacityOf:      "What is the highest load of %s that meets %s, where does its throughput stop growing, and what limits it?",
	QConfigurations:  "How do the configurations compare by knee, peak throughput and load within the requirements?",
	QRepeatability:   "Do the repeats agree (coefficient of variation of the average at most %s)?",
	QRepeatabilityOf: "Do the repeats agree on %s (coefficient of variation of its average at most %s)?",
	QSoak:            "Does the soak stay stable (the last fifth's average at most %s above the first fifth's, memory not growing)?",
	QInterference:    "Does %s disturb %s (its average rising by more than %s, or its errors by more than %s, while %s runs)?",

	StatusPassed:       "PASSED",
	StatusFailed:       "FAILED",
	StatusInconclusive: "INCONCLUSIVE",
	WhyFailed:          "%d of %d questions failed their expectation: %s",
	WhyInconclusive:    "%d of %d questions could not be answered from these runs: %s",
	WhyPassed:          "every question (%d) was answered within its expectation",
	NoQuestions:        "the study asks no question its runs can answer (name questions: in the study file)",

	RelRow:        "%s: average %s ms against %s ms (%s), %s",
	RelAnswer:     "%s against %s: %s",
	RelNoPairs:    "no run of %s has a run of %s at the same workload and load to compare with",
	RelFailed:     "slower than allowed (%s) at %s",
	RelHeld:       "not slower by more than %s beyond run-to-run noise at any matching level",
	RelHeldJudged: "not slower by more than %s beyond run-to-run noise at the %d of %d matching levels with enough data to judge",
	RelTooFew:     "%d of %d matching levels had too little data to judge (a verdict needs %d or more requests and %d or more seconds with requests on each side)",
	RelLabelRow:   "%s %s ms against %s ms (%s), %s",
	RelSuspect:    "a run's load was not held, or its generator's CPU was at its ceiling, in %s, so the response times there are suspect",
	RelNoise:      ", within the noise of these runs",
	RelStarved:    "the generator was starved of CPU in %d of the %d comparisons, so their response times include its own waiting",

	CapWithin:          "%s: within the requirements up to %s",
	CapSearch:          "%s: the capacity search answered: %s",
	SearchProbes:       "%s: the capacity search's probes, in the order they ran (each judged over its measured part, warm-up excluded)",
	CapWithinFrom:      "%s: within the requirements from %s to %s, though not at %s",
	CapWithinAt:        "%s: within the requirements at %s alone, not at %s",
	CapNoneWithin:      "%s: no tested load met the requirements (the lowest, %s, already broke them)",
	CapNoSLA:           "%s: no requirement stated, so no load is called within them",
	CapKnee:            "throughput stopped growing at %s (%s req/s)",
	CapNoKnee:          "throughput kept growing up to %s, the highest load tested: no knee",
	CapGenerator:       "the load generator limited the load there (%s), so this is the generator's limit, not the service's",
	CapLimit:           "no monitored resource saturated; the knee matches the configured limit %s (%s)",
	CapLimitNear:       "no monitored resource saturated; the configured limit %s (%s) lies within one step of the knee",
	CapComponent:       "limited by %s (%s %s of its capacity at %s)",
	CapLimitCounted:    "limited by %s, saturated as the server counts it (%s %s of its capacity on average at %s): the configured limit %s (%s)",
	CapKneeStarved:     "uncertain: the generator was starved of CPU at %s %s, so the knee may be where the generator, not the service, fell behind",
	CapNoKneeStarved:   "uncertain: the generator was starved of CPU at %s %s, so it may not have pushed the service to its knee",
	CapBusiest:         "no monitored resource saturated (the busiest, %s %s, was at %s of its capacity)",
	CapNothing:         "nothing monitored explains the knee",
	CapFewLevels:       "%s: fewer than two load levels, so no capacity can be read",
	CapMinLoadFailed:   "below the %s expected",
	CapMinLoadHeld:     "at least the %s expected",
	CapMinLoadDisputed: "yet %s met the requirements at %s: the study's runs disagree, so the question is not answered",
	CapAtLowest:        "at %s the average was %s ms with %s errors",
	CapMostFrequent:    " (most frequent: %s)",
	CapStarved:         "the generator was starved of CPU at %s: its response times include its own waiting",

	CfgAnswer:      "%s: highest peak throughput %s (%s); %s",
	CfgRow:         "%s (%s)",
	CfgPeak:        "peak %s req/s",
	CfgKnee:        "knee at %s",
	CfgKneeBetween: "knee between %s and %s",
	CfgNoKnee:      "no knee in the loads tested",
	CfgWithin:      "within the requirements up to %s",
	CfgNoneWithin:  "no load within the requirements",
	CfgFromSearch:  ", from its capacity search",
	CfgNone:        "fewer than two configurations of one workload",

	RepAnswer:         "%d runs of %s: average %s ± %s ms, coefficient of variation %s",
	RepAnswerOf:       "%d runs of %s, workload %s: average %s ± %s ms, coefficient of variation %s",
	RepNoWorkload:     "no two runs of one group and variant ran workload %s with response times",
	RepOutlier:        "%s is an outlier (%s ms)",
	RepOutlierGen:     "%s is an outlier (%s ms) and its generator was short of CPU",
	RepWithout:        "without it the variation is %s",
	RepNone:           "no run is an outlier",
	RepExceeds:        "above the %s allowed",
	RepHolds:          "within the %s allowed",
	RepThroughGen:     "the bound is exceeded through the outlier whose generator was short of CPU alone",
	RepInvalid:        "%s: the load was not held or the generator's CPU was at its ceiling",
	RepWithoutInvalid: "the other runs vary by %s",
	RepThroughInvalid: "the bound is exceeded through those runs alone, so the question is not answered",

	SoakStable:     "%s: stable over %s",
	SoakDrifting:   "%s: drifting over %s",
	SoakLabel:      "%s %s → %s ms (%s)",
	SoakNoise:      ", no significant trend: the seconds vary too much",
	SoakMemory:     "memory of %s %s → %s MB",
	SoakMemoryGrew: "memory of %s grew %s → %s MB (%s) and kept growing: a leak",
	SoakIndicative: "indicative only: %s is short for a soak (an hour or more shows trends reliably)",
	SoakNone:       "no run has role soak",

	IntNone:       "no run has a workload that runs within a window of another",
	IntStarved:    "yes: %s",
	IntWorst:      "%s disturbed %s in %d of %d runs; most in %s: average %s ms while %s ran against %s ms before, errors %s against %s",
	IntNotStarved: "no: %s",
	IntRun:        "%s: %s averaged %s ms during %s against %s ms before and %s ms after, errors %s against %s before",
	IntCPU:        "%s CPU %s %% before, %s %% during, %s %% after",
	IntWork:       "%s started %s of %s planned iterations (%s succeeded)",
	IntInvalid:    "%s: the load was not held or the generator's CPU was at its ceiling, so no evidence either way",
	IntInvalidAll: ", and no other run answers the question",

	BannerTitle:     "Validity: %d of %d runs have numbers to read with care",
	BannerGenerator: "%s: %s",
	BannerLoad:      "%s: the load was not held: %s",
	BannerOutlier:   "%s: far off its group (%s)",
	BannerMark:      "⚠",
	BannerMore:      " (and in %d more steps)",
	BannerMoreOne:   " (and in one more step)",
	BannerOffTrend:  "throughput %s req/s, more than %s below both neighbouring loads of %s",

	KindRelease:   "release comparison",
	KindSoak:      "soak stability",
	TheCandidate:  "the candidate",
	NoChange:      "no significant change",
	CapNotHeldAt:  "the load was not held, or the generator's CPU was at its ceiling, at %s",
	CfgGenerator:  "the generator limited the load in %d of %d configurations",
	RepNoGroup:    "no two runs share a workload, load and variant",
	IntNoneRaised: "in none of the %d runs did %s raise %s's average by more than %s or its errors by more than %s",
	IntGenerator:  "the generator was short of CPU in %s",

	StatusLine:       "Study status: %s — %s",
	ConfidenceLine:   "confidence %s: %s",
	NoteCompared:     "each run is compared only with a run of its own group (same workload and load level) in the baseline's release and configuration; Δ is its average minus that run's, in per cent, and \"—\" means its group has no such run",
	NoteSignificance: "a difference is called faster or slower only when it is beyond run-to-run noise and at least %g %% (docs/analysis-methods.md)",
	NoteNoMonitor:    "no run has monitor data (plateau run --monitor …, or plateau import of vmstat/jstat/docker stats)",
	NoteOutlier:      "an outlier is further from the median than 3 scaled median absolute deviations and 5 % of the median",
	NoteInferred:     "the study file names no questions; this one was inferred from the runs' roles and factors",
	NoteMarkRun:      " marks a run named in the validity banner",
	NoteMarkLoad:     " marks a load at which the generator was short of CPU or did not hold the load, or whose throughput fell far off its series",

	ConfHigh:       "high",
	ConfLow:        "low",
	ConfIndicative: "indicative",
}

// words is the study's fixed text and number formatting in one
// language: every answer, banner and section is worded through one.
type words struct {
	text textT
	loc  *locale.Locale
}

// wordsIn returns the study's words in loc (nil is English): each pattern
// of english looked up in the catalogue.
func wordsIn(loc *locale.Locale) *words {
	t := english
	v := reflect.ValueOf(&t).Elem()
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.String {
			f.SetString(loc.Word(f.String()))
		}
	}
	return &words{text: t, loc: loc}
}

// T is a message of the catalogue in the study's language (key a fmt
// format).
func (wd *words) T(key string, args ...any) string { return wd.loc.T(key, args...) }

// W is a message without arguments in the study's language.
func (wd *words) W(key string) string { return wd.loc.Word(key) }

// questionText is a question in words with its expectation.
func (wd *words) questionText(q Question) string {
	switch q.Kind {
	case Release:
		if q.Baseline != "" && q.Candidate != "" {
			return fmt.Sprintf(wd.text.QRelease, q.Candidate, q.Baseline, wd.pctWords(q.MaxSlowerPct))
		}
		return fmt.Sprintf(wd.text.QReleaseAny, wd.pctWords(q.MaxSlowerPct))
	case CapacityQ:
		if q.Workload != "" {
			return fmt.Sprintf(wd.text.QCapacityOf, q.Workload, wd.requirementWords(q.SLA))
		}
		return wd.text.QCapacity
	case Configurations:
		return wd.text.QConfigurations
	case Repeatability:
		if q.Workload != "" {
			return fmt.Sprintf(wd.text.QRepeatabilityOf, q.Workload, wd.pctWords(q.MaxCVPct))
		}
		return fmt.Sprintf(wd.text.QRepeatability, wd.pctWords(q.MaxCVPct))
	case SoakQ:
		return fmt.Sprintf(wd.text.QSoak, wd.pctWords(q.MaxDriftPct))
	case Interference:
		w, o := q.Workload, q.Other
		if w == "" {
			w = "the workload that runs throughout"
		}
		if o == "" {
			o = "the other workload"
		}
		return fmt.Sprintf(wd.text.QInterference, o, w, wd.pctWords(q.MaxSlowerPct), wd.pointsWords(q.MaxErrorPct), o)
	}
	return string(q.Kind)
}

// pctWords is a percentage as the references write it ("5 %", "12.5 %").
func (wd *words) pctWords(v float64) string {
	return wd.num(math.Round(v*10)/10) + " %"
}

// pointsWords is a difference of two percentages, in percentage points:
// "1 percentage point", "0.5 percentage points" (an error rate rising
// from 1 % to 2 % rose by 1 point, not by 1 %).
func (wd *words) pointsWords(v float64) string {
	if v == 1 {
		return wd.T("%s percentage point", wd.num(v))
	}
	return wd.T("%s percentage points", wd.num(v))
}

// signed is a change in per cent with its sign ("+10.2 %", "−36.7 %"),
// unsigned when it rounds to zero.
func (wd *words) signed(v float64) string { return wd.loc.Num(signedEN(v)) }

// signedEN is signed in English.
func signedEN(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0.0 %"
	}
	if v < 0 {
		return fmt.Sprintf("−%.1f %%", -v)
	}
	return fmt.Sprintf("+%.1f %%", v)
}

// ms is a time in milliseconds as the references write it: whole
// milliseconds from 100 ms, one decimal below, two below 1 ms, thousands
// separated.
func (wd *words) fms(v float64) string { return wd.loc.Num(fmsEN(v)) }

// fmsEN is fms in English.
func fmsEN(v float64) string {
	switch {
	case v >= 100:
		return thousandsEN(math.Round(v))
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// rps is a throughput as a sentence states it.
func (wd *words) rps(v float64) string { return wd.loc.Num(rpsEN(v)) }

// rpsEN is rps in English.
func rpsEN(v float64) string {
	if v >= 100 {
		return thousandsEN(math.Round(v))
	}
	return fmt.Sprintf("%.1f", v)
}

func (wd *words) thousands(v float64) string { return wd.loc.Num(thousandsEN(v)) }

// thousandsEN is thousands in English.
func thousandsEN(v float64) string {
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if v < 0 {
		return "−" + b.String()
	}
	return b.String()
}

// list joins items as a sentence does: "a", "a and b", "a, b and c".
func (wd *words) list(items []string) string { return wd.loc.And(items) }

// listEN is list in English.
func listEN(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// requirementWords states requirements in plain words: "an average
// response time under 2 s and errors under 1 %"; "its requirements" when
// none are given.
func (wd *words) requirementWords(exprs []string) string {
	if len(exprs) == 0 {
		return "its requirements"
	}
	var out []string
	for _, e := range exprs {
		out = append(out, wd.plainRequirement(e))
	}
	return wd.list(out)
}

// plainRequirement rewrites one requirement in words where it has a
// known shape ("avg(response_time) < 2s" → "an average response time
// under 2 s"); else it is quoted as written.
func (wd *words) plainRequirement(e string) string {
	f := strings.Fields(strings.NewReplacer("<=", " ≤ ", ">=", " ≥ ", "<", " < ", ">", " > ").Replace(e))
	if len(f) != 3 {
		return e
	}
	op := map[string]string{"<": "under", "≤": "at most", ">": "over", "≥": "at least"}[f[1]]
	if op == "" {
		return e
	}
	limit := f[2]
	for _, u := range []string{"ms", "s", "%"} {
		if n := strings.TrimSuffix(limit, u); n != limit && n != "" && (n[len(n)-1] >= '0' && n[len(n)-1] <= '9') {
			limit = n + " " + u
			break
		}
	}
	what := map[string]string{"avg(response_time)": "an average response time", "error_rate": "errors", "p95(response_time)": "a 95th percentile",
		"p90(response_time)": "a 90th percentile", "p99(response_time)": "a 99th percentile", "throughput": "a throughput"}[f[0]]
	if what == "" {
		return e
	}
	return what + " " + op + " " + limit
}

// lowerFirst lowers a sentence's first letter, to quote it after a colon.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
