package trend

// The rules of the latency drift judgement, in one place: the report reads
// them when it says why a drift was or was not judged.
const (
	// MinTrendMinutes is the shortest span under one load whose latency
	// drift is judged.
	MinTrendMinutes = 10
	// MinMinuteSamples is the fewest requests a minute needs to give a
	// per-minute value.
	MinMinuteSamples = 5
	// MinDriftSamples is the fewest requests, in the minutes counted, a
	// drift verdict rests on: a mean that "rose by 35 s" on 4 requests
	// says nothing, whatever its slope or shift.
	MinDriftSamples = 200
)

// DriftVerdict is the answer for one label's per-minute statistic.
type DriftVerdict string

// Drift verdicts. DriftThin is a significant slope or shift on fewer than
// MinDriftSamples requests: not enough data to judge.
const (
	DriftFlat DriftVerdict = "flat"
	DriftUp   DriftVerdict = "up"
	DriftDown DriftVerdict = "down"
	DriftThin DriftVerdict = "not_enough_data"
)

// LatencySkip says why no latency drift was judged at all.
type LatencySkip string

// Latency skip reasons; LatencyJudged when rows were judged.
const (
	LatencyJudged LatencySkip = ""
	// LatencyRunTooShort: the load never changed and the run lasted less
	// than MinTrendMinutes.
	LatencyRunTooShort LatencySkip = "run_too_short"
	// LatencyNoLongPhase: the load changed between phases and no phase
	// lasted MinTrendMinutes, so a level change cannot be told from a
	// load step.
	LatencyNoLongPhase LatencySkip = "no_long_phase"
	// LatencyFewMinutes: spans were long enough but too few minutes had
	// MinMinuteSamples requests.
	LatencyFewMinutes LatencySkip = "too_few_minutes"
)
