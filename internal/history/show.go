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
// (TOTAL when empty; a run of several workloads, which stores a TOTAL per
// workload, has a line per workload, named after its plan), and in its last column the stored change points of
// that label's whole-run series at the run ("p95 +31.0 %" is the first run
// of a level 31 % above the one before). A run without that label shows
// dashes. Below the table, every stored change point at the runs shown
// (cps, as Store.ChangePoints reads them): of label's series when a label
// was asked for, else of all series.
func Show(w io.Writer, runs []*Run, label string, cps []StoredChangePoint) error {
	asked := label != ""
	if label == "" {
		label = core.TotalLabel
	}
	at := map[[2]string][]string{}
	for _, c := range cps {
		if (c.Label == label || !asked && IsTotal(c.Label)) && c.Phase == WholeRun && c.Target == "" {
			k := [2]string{c.RunID, c.Label}
			at[k] = append(at[k], shortMetric(c.Metric)+" "+signedPct(c.ChangePct))
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "start\trun\tplan\ttags\tverdict\tsamples\terror %%\tmean ms\tp50 ms\tp90 ms\tp95 ms\tp99 ms\treq/s\tchange\t\n")
	for _, r := range runs {
		var rows []*LabelRow
		for i := range r.Labels {
			if l := &r.Labels[i]; l.Phase == WholeRun && l.Label == label {
				rows = []*LabelRow{l}
				break
			}
		}
		if rows == nil && !asked {
			// A run of several workloads stores a TOTAL per workload
			// (WorkloadTotalLabel): one line each, the workload named.
			for i := range r.Labels {
				if l := &r.Labels[i]; l.Phase == WholeRun && IsTotal(l.Label) {
					rows = append(rows, l)
				}
			}
		}
		if rows == nil {
			rows = []*LabelRow{nil}
		}
		for _, row := range rows {
			plan := r.Plan
			if row != nil && row.Label != label {
				plan += " [" + strings.TrimSuffix(row.Label, ": "+core.TotalLabel) + "]"
			}
			cells := []string{r.Start.Format("2006-01-02 15:04:05Z"), shortID(r.ID), plan, tagText(r.Tags), r.Verdict}
			change := "–"
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
				if c := at[[2]string{r.ID, row.Label}]; len(c) > 0 {
					change = strings.Join(c, ", ")
				}
			}
			cells = append(cells, change)
			fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%d runs; figures of %q over the whole run\n", len(runs), label); err != nil {
		return err
	}
	var list []StoredChangePoint
	for _, c := range cps {
		if !asked || c.Label == label {
			list = append(list, c)
		}
	}
	if len(list) == 0 {
		_, err := fmt.Fprintf(w, "no change point stored at these runs (alpha %v, minimum change %v %%, over each plan's runs)\n", StoredOptions().Alpha, StoredOptions().MinChangePct)
		return err
	}
	if _, err := fmt.Fprintf(w, "\n%d change points at these runs (alpha %v, minimum change %v %%, over each plan's runs):\n", len(list), StoredOptions().Alpha, StoredOptions().MinChangePct); err != nil {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "start\trun\tplan\tseries\tbefore\tafter\tchange\tp\t\t\n")
	for _, c := range list {
		worse := ""
		if c.Worse {
			worse = "worse"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s (%d runs)\t%s (%d runs)\t%s\t%s\t%s\t\n", c.Start.Format("2006-01-02 15:04:05Z"), shortID(c.RunID), c.Plan, c.Series,
			strconv.FormatFloat(c.BeforeMean, 'g', 4, 64), c.BeforeRuns, strconv.FormatFloat(c.AfterMean, 'g', 4, 64), c.AfterRuns,
			signedPct(c.ChangePct), strconv.FormatFloat(c.PValue, 'g', 3, 64), worse)
	}
	return tw.Flush()
}

// shortMetric names a metric in the change column.
func shortMetric(m string) string {
	switch m {
	case MetricP95:
		return "p95"
	case MetricMean:
		return "mean"
	case MetricErrorPct:
		return "errors"
	case MetricThroughput:
		return "req/s"
	}
	return m
}

func signedPct(v float64) string {
	sign := ""
	if v > 0 {
		sign = "+"
	}
	return sign + strconv.FormatFloat(v, 'f', 1, 64) + " %"
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
