package merge

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// hostPrefixes names each segment's monitors: its host name when every
// generator ran on its own host (pods are named <job>-<index>), otherwise
// the host name with the segment index, since N local generators share one.
func hostPrefixes(segs []*Segment) []string {
	count := map[string]int{}
	for _, s := range segs {
		count[s.Host]++
	}
	out := make([]string, len(segs))
	for i, s := range segs {
		h := s.Host
		if h == "" {
			h = "generator"
		}
		if count[s.Host] > 1 || s.Host == "" {
			h = fmt.Sprintf("%s#%d", h, s.index)
		}
		out[i] = h
	}
	return out
}

// mergeMonitors copies every segment's monitor series into out/monitor,
// renaming each target "<host>/<target>" (files "<host>.<file>") so that the
// same target watched from several generators stays apart, and rewriting
// events.jsonl to match. Only complete lines are copied: a torn last line of
// a killed generator is left out, as the monitor reader would.
func mergeMonitors(out string, segs []*Segment) ([]string, error) {
	prefixes := hostPrefixes(segs)
	var events [][]byte
	var notes []string
	made := false
	for i, s := range segs {
		src := filepath.Join(s.Dir, monitor.SubDir)
		entries, err := os.ReadDir(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", src, err)
		}
		if !made {
			if err := os.MkdirAll(filepath.Join(out, monitor.SubDir), 0o755); err != nil {
				return nil, fmt.Errorf("creating monitor directory: %w", err)
			}
			made = true
		}
		prefix := prefixes[i]
		filePrefix := safeFileName(prefix) + "."
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() {
				continue
			}
			path := filepath.Join(src, name)
			dst := filepath.Join(out, monitor.SubDir, filePrefix+name)
			switch {
			case name == monitor.EventsFile:
				evs, err := prefixEvents(path, prefix, filePrefix)
				if err != nil {
					return nil, err
				}
				events = append(events, evs...)
			case strings.HasSuffix(name, ".csv"):
				if err := prefixSeries(path, dst, prefix); err != nil {
					return nil, err
				}
			default:
				if err := copyFile(path, dst); err != nil {
					return nil, err
				}
			}
		}
	}
	if !made {
		return notes, nil
	}
	// events.jsonl in time order across generators (RFC 3339 UTC with
	// milliseconds sorts as text within one format; decode to be safe).
	type ev struct {
		t    string
		line []byte
	}
	evs := make([]ev, 0, len(events))
	for _, l := range events {
		var m struct {
			Time string `json:"time"`
		}
		_ = json.Unmarshal(l, &m)
		evs = append(evs, ev{m.Time, l})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	var buf bytes.Buffer
	for _, e := range evs {
		buf.Write(e.line)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(out, monitor.SubDir, monitor.EventsFile), buf.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("writing monitor events: %w", err)
	}
	return notes, nil
}

// completeBytes reads a file up to its last newline.
func completeBytes(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading monitor file: %w", err)
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i+1], nil
	}
	return nil, nil
}

// prefixEvents returns events.jsonl's lines with target and file renamed.
func prefixEvents(path, prefix, filePrefix string) ([][]byte, error) {
	b, err := completeBytes(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		// Decode into a generic map so fields this version does not know
		// survive the copy.
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if t, ok := m["target"].(string); ok {
			m["target"] = prefix + "/" + t
		}
		if f, ok := m["file"].(string); ok && f != "" {
			m["file"] = filePrefix + f
		}
		l, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// prefixSeries copies a series CSV, renaming the target column.
func prefixSeries(path, dst, prefix string) error {
	b, err := completeBytes(path)
	if err != nil {
		return err
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = 6
	cr.ReuseRecord = true
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	cw := csv.NewWriter(bw)
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if line > 1 {
			rec[1] = prefix + "/" + rec[1]
		}
		if err := cw.Write(rec); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %w", dst, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("reading %s: %w", src, err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", dst, err)
	}
	return nil
}

// safeFileName keeps A-Za-z0-9._- and replaces the rest with _, as the
// monitor session names its files.
func safeFileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// writeInfo writes the merged run.json atomically.
func writeInfo(dir string, in *Info) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding run info: %w", err)
	}
	return rundir.WriteFileAtomic(filepath.Join(dir, rundir.InfoFile), append(b, '\n'))
}
