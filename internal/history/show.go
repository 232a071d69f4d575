package history

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/plateau-perf/plateau/internal/core"
)

// Show writes the console table of `plateau history show`: one line per
// run, oldest first, with its tags and the whole-run figures of label
// (TOTAL when empty). A run without that label shows dashes.
func Show(w io.Writer, runs []*Run, label string) error {
	if label == "" {
		label = core.TotalLabel
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "start\trun\tplan\ttags\tverdict\tsamples\terror %%\tmean ms\tp50 ms\tp90 ms\tp95 ms\tp99 ms\treq/s\t\n")
	for _, r := range runs {
		cells := []string{r.Start.Format("2006-01-02 15:04:05Z"), shortID(r.ID), r.Plan, tagText(r.Tags), r.Verdict}
		var row *LabelRow
		for i := range r.Labels {
			if l := &r.Labels[i]; l.Phase == WholeRun && l.Label == label {
				row = l
				break
			}
		}
		if row == nil {
			cells = append(cells, "–", "–", "–", "–", "–", "–", "–", "–")
		} else {
			cells = append(cells, strconv.FormatInt(row.Samples, 10), num(row.ErrorPct, 2))
			if row.NoTimes {
				cells = append(cells, "–", "–", "–", "–", "–")
			} else {
				cells = append(cells, num(row.MeanMs, 1), num(row.P50Ms, 1), num(row.P90Ms, 1), num(row.P95Ms, 1), num(row.P99Ms, 1))
			}
			cells = append(cells, num(row.ThroughputRPS, 2))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d runs; figures of %q over the whole run\n", len(runs), label)
	return err
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func tagText(tags map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, k+"="+tags[k])
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
