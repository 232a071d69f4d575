package executor

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/importer"
)

// LiveReader is implemented by tools whose results are read when they end
// but whose live figures can be read while they run, apart from the
// import: ReadLive feeds live until exited is closed and the files are
// read to their end.
type LiveReader interface {
	ReadLive(out string, exited <-chan struct{}, live *importer.Live) error
}

var _ LiveReader = locust{}

// locustPcts are the percentile columns of Locust's stats history.
var locustPcts = []struct {
	col string
	pct float64
}{{"50%", 50}, {"66%", 66}, {"75%", 75}, {"80%", 80}, {"90%", 90}, {"95%", 95}, {"98%", 98}, {"99%", 99},
	{"99.9%", 99.9}, {"99.99%", 99.99}, {"100%", 100}}

// ReadLive follows Locust's stats history (a row per name a second, with
// --csv-full-history) and adds each row's new requests and failures —
// the growth of its cumulative counts — with the growth of its sum of
// response times, spread over Locust's current percentiles (its last ten
// seconds): Locust writes no per-request times. When Locust has ended,
// the growth from the last history row to its final stats file is added,
// so the live totals end equal to Locust's own.
func (locust) ReadLive(out string, exited <-chan struct{}, live *importer.Live) error {
	fl, err := importer.Follow(filepath.Join(out, "locust_stats_history.csv"), exited, nil)
	if err != nil {
		return err
	}
	defer fl.Close()
	type total struct {
		count, fail int64
		sum         float64 // ms
	}
	seen := map[string]total{}
	r := csv.NewReader(importer.NoPause(fl))
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("locust stats history: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0
		}
		return v
	}
	add := func(label string, count, fail int64, sum float64, knots []importer.Knot) {
		t := seen[label]
		dc, df, ds := count-t.count, fail-t.fail, sum-t.sum
		if dc < 0 || df < 0 { // a reset (Locust's stats were cleared)
			dc, df, ds = count, fail, sum
		}
		seen[label] = total{count, fail, sum}
		live.AddCounts("locust", label, dc, df, int64(ds*1000+0.5), knots)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			continue // a malformed row: the import counts it
		}
		name := get(rec, "Name")
		if name == "Aggregated" {
			if u, err := strconv.Atoi(get(rec, "User Count")); err == nil {
				live.SetUsers("locust", u)
			}
			continue
		}
		var knots []importer.Knot
		for _, p := range locustPcts {
			if v, err := strconv.ParseFloat(get(rec, p.col), 64); err == nil {
				knots = append(knots, importer.Knot{Pct: p.pct, Us: int64(v*1000 + 0.5)})
			}
		}
		count, fail := int64(num(get(rec, "Total Request Count"))), int64(num(get(rec, "Total Failure Count")))
		add(importer.MethodLabel(get(rec, "Type"), name), count, fail, num(get(rec, "Total Average Response Time"))*float64(count), knots)
	}
	// Locust's final figures: its stats file, written when it quits.
	b, err := os.ReadFile(filepath.Join(out, "locust_stats.csv"))
	if err != nil {
		return nil
	}
	sr := csv.NewReader(strings.NewReader(string(b)))
	sr.FieldsPerRecord = -1
	rows, err := sr.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil
	}
	col = map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, rec := range rows[1:] {
		name := get(rec, "Name")
		if name == "Aggregated" {
			continue
		}
		count, fail := int64(num(get(rec, "Request Count"))), int64(num(get(rec, "Failure Count")))
		var knots []importer.Knot
		for _, p := range locustPcts {
			if v, err := strconv.ParseFloat(get(rec, p.col), 64); err == nil {
				knots = append(knots, importer.Knot{Pct: p.pct, Us: int64(v*1000 + 0.5)})
			}
		}
		add(importer.MethodLabel(get(rec, "Type"), name), count, fail, num(get(rec, "Average Response Time"))*float64(count), knots)
	}
	return nil
}
