package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// ReadPhases reads a phases CSV: a header naming the columns, then one phase
// per line. Columns, any order, matched case-insensitively:
//
//	name | phase | iteration   the phase's name (required)
//	start, end                 its bounds (required): RFC 3339, epoch seconds,
//	                           or "2019-05-13_11-10-14" / "2019-05-13 11:10:14"
//	                           with the zone from clock
//	users | threads            active users (optional)
//	nodes                      generator nodes; users are multiplied by it
//	workload                   the workload the phase belongs to (optional)
//
// The delimiter may be ',', ';' or a tab. Phases are returned in start order;
// overlapping phases of the same workload are an error.
func ReadPhases(path string, clock Clock) ([]core.Phase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading phases: %w", err)
	}
	defer f.Close()
	return ParsePhases(f, path, clock)
}

// ParsePhases is ReadPhases on a reader; name is used in errors.
func ParsePhases(r io.Reader, name string, clock Clock) ([]core.Phase, error) {
	data, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("reading phases: %w", err)
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	first, _, _ := strings.Cut(text, "\n")
	cr := csv.NewReader(strings.NewReader(text))
	switch {
	case strings.Count(first, ";") > strings.Count(first, ","):
		cr.Comma = ';'
	case strings.Count(first, "\t") > strings.Count(first, ","):
		cr.Comma = '\t'
	}
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: reading phases header: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		switch h {
		case "phase", "iteration", "step":
			h = "name"
		case "threads":
			h = "users"
		}
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, need := range []string{"name", "start", "end"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s:1: phases header %q lacks a %q column (want name,start,end[,users])", name, strings.Join(header, ","), need)
		}
	}
	var out []core.Phase
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		get := func(c string) string {
			i, ok := col[c]
			if !ok || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		p := core.Phase{Name: get("name"), Workload: get("workload")}
		if p.Name == "" {
			return nil, fmt.Errorf("%s:%d: empty phase name", name, line)
		}
		if p.Start, err = parsePhaseTime(get("start"), clock); err != nil {
			return nil, fmt.Errorf("%s:%d: start: %w", name, line, err)
		}
		if p.End, err = parsePhaseTime(get("end"), clock); err != nil {
			return nil, fmt.Errorf("%s:%d: end: %w", name, line, err)
		}
		if !p.End.After(p.Start) {
			return nil, fmt.Errorf("%s:%d: phase %q ends (%s) before it starts (%s)", name, line, p.Name, get("end"), get("start"))
		}
		if u := get("users"); u != "" {
			n, err := strconv.Atoi(u)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s:%d: users %q is not a count", name, line, u)
			}
			p.Users = n
			if nd := get("nodes"); nd != "" {
				m, err := strconv.Atoi(nd)
				if err != nil || m < 1 {
					return nil, fmt.Errorf("%s:%d: nodes %q is not a count", name, line, nd)
				}
				p.Users *= m
			}
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no phases", name)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	for i := 1; i < len(out); i++ {
		for j := 0; j < i; j++ {
			if out[j].Workload == out[i].Workload && out[i].Start.Before(out[j].End) {
				return nil, fmt.Errorf("%s: phases %q and %q overlap", name, out[j].Name, out[i].Name)
			}
		}
	}
	return out, nil
}

func parsePhaseTime(s string, clock Clock) (time.Time, error) {
	if len(s) == 19 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	return ParseTimeFlag(s, clock, "phase time")
}

// DerivePhases turns the highest thread count seen per second into phases:
// every stretch of time with one count that lasts at least minDur becomes a
// phase named "N threads" (numbered when a count repeats). Shorter stretches
// are ramps and belong to no phase. A second without a reading (no sample
// completed in it) never ends a phase: it belongs to the stretch around it
// when the readings on both sides agree, so every sample of a steady run
// lands in its one phase. Where the count changes across such a gap, the
// stretch before it ends at its last reading. Phase bounds fall on whole
// seconds: from the first second of the stretch to the end of its last.
func DerivePhases(threads map[int64]int32, minDur time.Duration) []core.Phase {
	secs := make([]int64, 0, len(threads))
	for s := range threads {
		secs = append(secs, s)
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i] < secs[j] })
	minSec := int64(minDur / time.Second)
	var out []core.Phase
	seen := map[int32]int{}
	emit := func(from, to int64, n int32) {
		if to-from < minSec || n <= 0 {
			return
		}
		seen[n]++
		out = append(out, core.Phase{Start: time.Unix(from, 0).UTC(), End: time.Unix(to, 0).UTC(), Users: int(n)})
	}
	for i := 0; i < len(secs); {
		j := i + 1
		for j < len(secs) && threads[secs[j]] == threads[secs[i]] {
			j++
		}
		emit(secs[i], secs[j-1]+1, threads[secs[i]])
		i = j
	}
	count := map[int32]int{}
	for i := range out {
		n := int32(out[i].Users)
		out[i].Name = fmt.Sprintf("%d threads", n)
		if seen[n] > 1 {
			count[n]++
			out[i].Name = fmt.Sprintf("%d threads (%d)", n, count[n])
		}
	}
	return out
}
