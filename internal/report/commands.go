package report

import (
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// commandsLine is the Test runs section's sentence on the plan's prepare
// and cleanup commands: how many ran, for how long, and how they ended
// (none of it is in any load figure). Nil when the plan has none.
func (b *builder) commandsLine() doc.Block {
	info := b.d.Info
	if len(info.Prepare) == 0 && len(info.Cleanup) == 0 {
		return nil
	}
	part := func(rs []rundir.CommandResult, what, when string) string {
		if len(rs) == 0 {
			return ""
		}
		var total float64
		var bad []string
		for i := range rs {
			total += rs[i].DurationS
			if rs[i].Status != rundir.CommandOK {
				bad = append(bad, fmt.Sprintf("%q %s", b.red.String(rs[i].Name), b.red.String(rs[i].Describe())))
			}
		}
		s := fmt.Sprintf("%s ran for %.1f s %s", plural(int64(len(rs)), what+" command"), total, when)
		if len(bad) > 0 {
			s += ", and " + joinAnd(bad)
		}
		return s
	}
	text := sentences(
		"data preparation, not measured: "+strings.Join(nonEmptyParts(
			part(info.Prepare, "prepare", "before the first request"),
			part(info.Cleanup, "cleanup", "after the last")), "; "),
		"their output is in the run directory's "+rundir.CommandDir+"/ folder and the commands are listed in the appendix")
	return &doc.Para{Text: text}
}

func nonEmptyParts(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// commandsTable is the appendix's table of the prepare and cleanup
// commands: one row each, with its command line (secrets masked),
// duration, exit status and log file.
func (b *builder) commandsTable() doc.Block {
	info := b.d.Info
	if len(info.Prepare) == 0 && len(info.Cleanup) == 0 {
		return nil
	}
	t := &doc.Table{Caption: "Prepare and cleanup commands (not measured)", Columns: []doc.Column{{Name: "Phase"}, {Name: "Name"},
		{Name: "Command"}, {Name: "Start"}, {Name: "Duration (s)", Align: doc.Right}, {Name: "Exit", Align: doc.Right},
		{Name: "Status"}, {Name: "Output"}}}
	for _, ph := range []struct {
		name string
		rs   []rundir.CommandResult
	}{{"prepare", info.Prepare}, {"cleanup", info.Cleanup}} {
		for _, r := range ph.rs {
			lvl, exit, start, d := doc.OK, "–", "–", "–"
			if r.Status != rundir.CommandOK {
				lvl = doc.Fail
			}
			if r.Status == rundir.CommandSkipped {
				lvl = doc.NoData
			} else {
				start, d = r.Start.Format("15:04:05"), fmt.Sprintf("%.2f", r.DurationS)
			}
			if r.ExitCode >= 0 {
				exit = fmt.Sprint(r.ExitCode)
			}
			out := "–"
			if r.Log != "" {
				out = fmt.Sprintf("%s (%s)", r.Log, bytesU(float64(r.OutputBytes)))
			}
			cmd := b.red.String(r.Command)
			if r := []rune(cmd); len(r) > 200 {
				cmd = string(r[:200]) + "…"
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: ph.name}, {Text: b.red.String(r.Name)}, {Text: cmd},
				{Text: start}, {Text: d}, {Text: exit}, {Text: r.Status, Level: lvl}, {Text: out}}})
		}
	}
	return t
}
