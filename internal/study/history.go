package study

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// HistorySel selects a study entry's runs from a results store (plateau
// history): the runs carrying every tag given, of one plan when given,
// oldest first, the last Last of them (all when 0).
type HistorySel struct {
	// DB is the store: an SQLite file (relative to the study file) or a
	// postgres:// URL.
	DB   string
	Plan string
	Tags map[string]string
	Last int
}

// historyKeys are the keys of a run's history: mapping.
var historyKeys = []string{"db", "plan", "tags", "last"}

// parseHistorySel reads a run's history: mapping.
func parseHistorySel(v *yaml.Node, bad badFunc) *HistorySel {
	h := &HistorySel{Tags: map[string]string{}}
	if v.Kind != yaml.MappingNode {
		bad(v, "history must be a mapping {db: history.db, tags: {release: \"1.5\"}, last: 3}")
		return h
	}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		switch k.Value {
		case "db", "plan":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				bad(val, "history %s must be a value", k.Value)
				continue
			}
			if k.Value == "db" {
				h.DB = val.Value
			} else {
				h.Plan = val.Value
			}
		case "tags":
			if val.Kind != yaml.MappingNode {
				bad(val, "history tags must be a mapping of tag: value (e.g. {workflow: checkin})")
				continue
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				tk, tv := val.Content[j], val.Content[j+1]
				if tv.Kind != yaml.ScalarNode || tk.Value == "" {
					bad(tv, "tag %s must be a value", tk.Value)
					continue
				}
				h.Tags[tk.Value] = tv.Value
			}
		case "last":
			n, err := strconv.Atoi(val.Value)
			if err != nil || n <= 0 || val.Kind != yaml.ScalarNode {
				bad(val, "history last must be a whole number above 0, not %q", val.Value)
			}
			h.Last = n
		default:
			bad(k, "unknown history key %q (%s)", k.Value, strings.Join(historyKeys, ", "))
		}
	}
	if h.DB == "" {
		bad(v, "history has no db (an SQLite file or a postgres:// URL)")
	}
	return h
}

// ResolveHistory replaces each run entry that selects its runs from a
// results store by one entry per run selected, in the entry's place,
// oldest first: its directory as stored, the entry's role, its name when
// it selects one run, and its factors — the release factor, when the
// entry does not give one, is the run's release tag (as `plateau history
// add --tag release=…` stored it). A study is built from its runs'
// directories (the answers, the runs, labels and resources tables, the
// causes and the charts read the samples, the intervals and the monitor
// data, which the store does not keep), so a selected run whose directory
// has been moved or deleted is an error naming the run, its tags and where
// it was; `plateau history report` charts the stored figures without it.
func (f *File) ResolveHistory(ctx context.Context) error {
	if !slices.ContainsFunc(f.Runs, func(r RunRef) bool { return r.History != nil }) {
		return nil
	}
	var errs []error
	at := func(line int, format string, a ...any) {
		errs = append(errs, &Error{File: f.Path, Line: line, Col: 5, Msg: fmt.Sprintf(format, a...)})
	}
	var out []RunRef
	for _, e := range f.Runs {
		if e.History == nil {
			out = append(out, e)
			continue
		}
		runs, where, err := f.selectRuns(ctx, e.History)
		if err != nil {
			at(e.Line, "%v", err)
			continue
		}
		if len(runs) == 0 {
			at(e.Line, "no run stored in %s has %s", where, selWords(e.History))
			continue
		}
		var gone []string
		for _, r := range runs {
			if why := dirGone(r); why != "" {
				gone = append(gone, fmt.Sprintf("run %s (%s, started %s) was added from %s, which %s",
					shortID(r.ID), tagWords(r.Tags), r.Start.Format("2006-01-02 15:04Z"), r.Dir, why))
				continue
			}
			ref := RunRef{Dir: r.Dir, Role: e.Role, Factors: e.Factors, Line: e.Line}
			if len(runs) == 1 {
				ref.Name = e.Name
			}
			if ref.Factors.Release == "" {
				ref.Factors.Release = r.Tags["release"]
			}
			out = append(out, ref)
		}
		if len(gone) > 0 {
			at(e.Line, "%d of the %d runs with %s in %s have no run directory any more:\n  %s\n"+
				"a study is built from its runs' directories — its answers, runs, labels and resources tables, causes and charts read the samples, "+
				"intervals and monitor data, which the history keeps only as per-label figures; restore the directories, narrow the selection "+
				"(tags, last), or chart the stored figures with plateau history report", len(gone), len(runs), selWords(e.History), where, strings.Join(gone, "\n  "))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	f.Runs = out
	if len(f.Runs) < 2 {
		return &Error{File: f.Path, Msg: fmt.Sprintf("a study needs at least two runs; the history selections give %d", len(f.Runs))}
	}
	nb := 0
	for _, r := range f.Runs {
		if r.Role == Baseline {
			nb++
		}
	}
	if nb > 1 {
		return &Error{File: f.Path, Msg: fmt.Sprintf("a study has one baseline; %d runs have role baseline", nb)}
	}
	var qerrs []error
	checkQuestions(f, nil, func(n *yaml.Node, format string, a ...any) {
		qerrs = append(qerrs, &Error{File: f.Path, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, a...)})
	})
	return errors.Join(qerrs...)
}

// selectRuns reads the runs h selects, and names the store for messages.
func (f *File) selectRuns(ctx context.Context, h *HistorySel) ([]*history.Run, string, error) {
	db := h.DB
	if !history.IsPostgres(db) {
		if !filepath.IsAbs(db) {
			db = filepath.Join(filepath.Dir(f.Path), db)
		}
		// Opening would create a missing file: a mistyped path would
		// select nothing from a new, empty store.
		if _, err := os.Stat(db); err != nil {
			return nil, db, fmt.Errorf("history db %s: %w", db, err)
		}
	}
	s, err := history.Open(ctx, db)
	if err != nil {
		return nil, "", err
	}
	defer s.Close()
	runs, err := s.Runs(ctx, history.Filter{Plan: h.Plan, Tags: h.Tags})
	if err != nil {
		return nil, s.Where(), err
	}
	if h.Last > 0 && len(runs) > h.Last {
		runs = runs[len(runs)-h.Last:]
	}
	return runs, s.Where(), nil
}

// dirGone says why a stored run's directory cannot be read ("" when it
// can): missing, or holding another run now.
func dirGone(r *history.Run) string {
	info, err := rundir.ReadInfo(r.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "is gone"
	case err != nil:
		return fmt.Sprintf("cannot be read (%v)", err)
	case info.RunID() != r.ID:
		return fmt.Sprintf("now holds another run (%s)", shortID(info.RunID()))
	}
	return ""
}

func selWords(h *HistorySel) string {
	var parts []string
	if h.Plan != "" {
		parts = append(parts, fmt.Sprintf("plan %q", h.Plan))
	}
	if len(h.Tags) > 0 {
		parts = append(parts, "tags "+tagWords(h.Tags))
	}
	if len(parts) == 0 {
		return "any tags"
	}
	return strings.Join(parts, " and ")
}

func tagWords(tags map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, k+"="+tags[k])
	}
	if len(parts) == 0 {
		return "no tags"
	}
	return strings.Join(parts, " ")
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
