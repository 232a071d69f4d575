package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/locale"
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
				bad = append(bad, fmt.Sprintf("%q %s", b.red.String(rs[i].Name), b.red.String(CommandOutcome(b.loc, &rs[i]))))
			}
		}
		s := b.T("%s ran for %.1f s %s", b.plural(int64(len(rs)), what), total, when)
		if len(bad) > 0 {
			s += b.W(", and ") + b.joinAnd(bad)
		}
		return s
	}
	text := sentences(
		b.W("data preparation, not measured: ")+strings.Join(nonEmptyParts(
			part(info.Prepare, "prepare command", b.W("before the first request")),
			part(info.Cleanup, "cleanup command", b.W("after the last"))), "; "),
		b.W("their output is in the run directory's ")+rundir.CommandDir+b.W("/ folder and the commands are listed in the appendix"))
	return &doc.Para{Text: text}
}

// CommandOutcome says in a few words, in loc's language, how a prepare or
// cleanup command ended: "ok in 1.2 s", "failed with exit status 3 after
// 0.4 s (output in commands/…; last line: …)" — rundir's Describe, the
// English of run.json and import logs, worded for a document or console.
func CommandOutcome(loc *locale.Locale, r *rundir.CommandResult) string {
	d := loc.Num(fmt.Sprintf("%.1f", r.DurationS))
	var s string
	switch r.Status {
	case rundir.CommandOK:
		return loc.T("ok in %s s", d)
	case rundir.CommandSkipped:
		return loc.Word("skipped (an earlier prepare command failed)")
	case rundir.CommandTimeout:
		s = loc.T("timed out after %s s", d)
	case rundir.CommandInterrupted:
		s = loc.T("interrupted after %s s", d)
	default:
		switch {
		case r.ExitCode >= 0:
			s = loc.T("failed with exit status %d after %s s", r.ExitCode, d)
		case r.Error != "":
			s = loc.T("failed: %s", r.Error)
		default:
			s = loc.T("failed after %s s", d)
		}
	}
	var more []string
	if r.Log != "" && r.OutputBytes > 0 {
		more = append(more, loc.T("output in %s", r.Log))
	}
	if n := len(r.Tail); n > 0 {
		more = append(more, loc.T("last line: %q", r.Tail[n-1]))
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, "; ") + ")"
	}
	return s
}

// commandStatus words a command's status (run.json's enumeration).
func commandStatus(loc *locale.Locale, status string) string {
	switch status {
	case rundir.CommandOK:
		return loc.Word("ok")
	case rundir.CommandFailed:
		return loc.Word("failed")
	case rundir.CommandTimeout:
		return loc.Word("timeout")
	case rundir.CommandInterrupted:
		return loc.Word("interrupted")
	case rundir.CommandSkipped:
		return loc.Word("skipped")
	}
	return status
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
	t := &doc.Table{Caption: b.W("Prepare and cleanup commands (not measured)"), Columns: []doc.Column{{Name: b.W("Phase")}, {Name: b.W("Name")},
		{Name: b.W("Command")}, {Name: b.W("Start")}, {Name: b.W("Duration (s)"), Align: doc.Right}, {Name: b.W("Exit"), Align: doc.Right},
		{Name: b.W("Status")}, {Name: b.W("Output")}}}
	for _, ph := range []struct {
		name string
		rs   []rundir.CommandResult
	}{{b.W("prepare"), info.Prepare}, {b.W("cleanup"), info.Cleanup}} {
		for _, r := range ph.rs {
			lvl, exit, start, d := doc.OK, "–", "–", "–"
			if r.Status != rundir.CommandOK {
				lvl = doc.Fail
			}
			if r.Status == rundir.CommandSkipped {
				lvl = doc.NoData
			} else {
				start, d = r.Start.Format("15:04:05"), b.loc.Num(fmt.Sprintf("%.2f", r.DurationS))
			}
			if r.ExitCode >= 0 {
				exit = fmt.Sprint(r.ExitCode)
			}
			out := "–"
			if r.Log != "" {
				out = fmt.Sprintf("%s (%s)", r.Log, b.bytesU(float64(r.OutputBytes)))
			}
			cmd := b.red.String(r.Command)
			if r := []rune(cmd); len(r) > 200 {
				cmd = string(r[:200]) + "…"
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: ph.name}, {Text: b.red.String(r.Name)}, {Text: cmd},
				{Text: start}, {Text: d}, {Text: exit}, {Text: commandStatus(b.loc, r.Status), Level: lvl}, {Text: out}}})
		}
	}
	return t
}

// manifest is the part of a datagen.json (package datagen's Result) the
// report shows.
type manifest struct {
	Seed     uint64  `json:"seed"`
	Scale    float64 `json:"scale"`
	Entities []struct {
		Name      string `json:"name"`
		File      string `json:"file"`
		Parent    string `json:"parent"`
		Rows      int64  `json:"rows"`
		Bytes     int64  `json:"bytes"`
		PerParent *struct {
			Mean     float64 `json:"mean"`
			Min, Max int64
		} `json:"per_parent"`
	} `json:"entities"`
}

// dataVolume is the Test runs section's table of the data generated by
// plateau datagen in a prepare command (run directory's datagen/, one
// table per generation): reference 002's data-volume table. A manifest
// that cannot be read is a note.
func (b *builder) dataVolume() []doc.Block {
	var out []doc.Block
	for _, f := range b.in.run.Datagen {
		err := f.Err
		var m manifest
		if err == nil {
			err = json.Unmarshal(f.Data, &m)
		}
		if err != nil {
			b.extra.Notes = append(b.extra.Notes, b.T("data volume: %s: %v", f.Name, err))
			continue
		}
		t := &doc.Table{Caption: b.T("Data volume: generated by plateau datagen before the run (%s, seed %d, scale %g)",
			strings.TrimSuffix(f.Name, ".json"), m.Seed, m.Scale),
			Columns: []doc.Column{{Name: b.W("Entity")}, {Name: b.W("Rows"), Align: doc.Right}, {Name: b.W("Per parent (mean, min–max)"), Align: doc.Right},
				{Name: b.W("Size"), Align: doc.Right}, {Name: b.W("File")}}}
		for _, e := range m.Entities {
			pp := "–"
			if e.PerParent != nil && e.Parent != "" {
				pp = b.T("%s per row of %s (%d–%d)", b.num3(e.PerParent.Mean), b.red.String(e.Parent), e.PerParent.Min, e.PerParent.Max)
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(e.Name)}, {Text: b.count(e.Rows)}, {Text: pp},
				{Text: b.bytesU(float64(e.Bytes))}, {Text: b.red.String(e.File)}}})
		}
		out = append(out, t)
	}
	return out
}
