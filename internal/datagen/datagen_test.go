package datagen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func mustParse(t testing.TB, src string) *Spec {
	t.Helper()
	s, err := Parse("spec.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func generate(t testing.TB, s *Spec, dir string) *Result {
	t.Helper()
	r, err := Generate(context.Background(), s, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readCSV returns the rows of a generated CSV file as maps column → text.
func readCSV(t testing.TB, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func readNDJSON(t testing.TB, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %d: %v", path, len(out)+1, err)
		}
		out = append(out, m)
	}
	return out
}

const schoolSpec = "../../examples/school-data/school.yaml"

// The example spec modelled on reference 002 at 1 %: every child row's
// parent id exists, copied ancestor fields agree with the ancestors, refs
// point at existing rows, and the counts match the manifest.
func TestSchoolReferentialIntegrity(t *testing.T) {
	t.Parallel()
	s, err := LoadFile(schoolSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	res, err := Generate(context.Background(), s, Options{Dir: dir, Scale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	campaigns := readCSV(t, filepath.Join(dir, "campaigns.csv"))
	teachers := readCSV(t, filepath.Join(dir, "teachers.csv"))
	classes := readCSV(t, filepath.Join(dir, "classes.csv"))
	students := readCSV(t, filepath.Join(dir, "students.csv"))
	responses := readNDJSON(t, filepath.Join(dir, "responses.ndjson"))
	if len(campaigns) != 12 || len(teachers) != 4 || len(classes) != 8 {
		t.Fatalf("campaigns %d (fixed 12), teachers %d (360 × 0.01), classes %d (2 per teacher)", len(campaigns), len(teachers), len(classes))
	}
	for i, e := range res.Entities {
		want := []int{len(campaigns), len(teachers), len(classes), len(students), len(responses)}[i]
		if e.Rows != int64(want) {
			t.Errorf("manifest: %s has %d rows, the file %d", e.Name, e.Rows, want)
		}
	}
	index := func(rows []map[string]string, key string) map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, r := range rows {
			if m[r[key]] != nil {
				t.Errorf("duplicate %s %s", key, r[key])
			}
			m[r[key]] = r
		}
		return m
	}
	cam, tea, cla, stu := index(campaigns, "campaign_id"), index(teachers, "teacher_id"), index(classes, "class_id"), index(students, "student_id")
	for _, c := range classes {
		tr := tea[c["teacher_id"]]
		if tr == nil {
			t.Fatalf("class %s: teacher %s does not exist", c["class_id"], c["teacher_id"])
		}
		if c["urn"] != "urn:class:"+tr["last_name"]+":"+c["class_id"] {
			t.Errorf("class urn %q does not use its teacher's name %q", c["urn"], tr["last_name"])
		}
		if cam[c["campaign_id"]] == nil {
			t.Errorf("class %s: campaign %s does not exist", c["class_id"], c["campaign_id"])
		}
	}
	for _, s := range students {
		if cla[s["class_id"]] == nil {
			t.Fatalf("student %s: class %s does not exist", s["student_id"], s["class_id"])
		}
	}
	perStudent := map[string]int{}
	for _, r := range responses {
		sid := strconv.Itoa(int(r["student_id"].(float64)))
		st := stu[sid]
		if st == nil {
			t.Fatalf("response %v: student %s does not exist", r["response_id"], sid)
		}
		perStudent[sid]++
		if want := cla[st["class_id"]]["campaign_id"]; strconv.Itoa(int(r["campaign_id"].(float64))) != want {
			t.Fatalf("response %v: campaign %v, its student's class has %s", r["response_id"], r["campaign_id"], want)
		}
		if len(r["uuid"].(string)) != 36 {
			t.Fatalf("uuid %q", r["uuid"])
		}
	}
	if len(perStudent) != len(students) {
		t.Errorf("%d of %d students have responses (binomial(540, 0.75) is never 0)", len(perStudent), len(students))
	}
}

// The same spec and seed give the same bytes; another seed other bytes.
func TestSameSeedSameBytes(t *testing.T) {
	t.Parallel()
	s, err := LoadFile(schoolSpec)
	if err != nil {
		t.Fatal(err)
	}
	files := func(seed *uint64) map[string][]byte {
		dir := t.TempDir()
		if _, err := Generate(context.Background(), s, Options{Dir: dir, Scale: 0.005, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, e := range s.Entities {
			b, err := os.ReadFile(filepath.Join(dir, e.File))
			if err != nil {
				t.Fatal(err)
			}
			out[e.File] = b
		}
		return out
	}
	a, b := files(nil), files(nil)
	seven := uint64(7)
	c := files(&seven)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	if bytes.Equal(a["responses.ndjson"], c["responses.ndjson"]) {
		t.Error("seed 7 gave the same responses as seed 2013")
	}
}

// perParent generates n parents with the given per_parent distribution
// and returns the number of children of each parent.
func perParent(t *testing.T, n int, dist string) []int {
	t.Helper()
	s := mustParse(t, `seed: 42
entities:
  p:
    count: `+strconv.Itoa(n)+`
    fields: {id: seq}
  c:
    parent: p
    per_parent: `+dist+`
    fields: {pid: parent.id}
`)
	dir := t.TempDir()
	generate(t, s, dir)
	counts := make([]int, n)
	for _, r := range readCSV(t, filepath.Join(dir, "c.csv")) {
		id, _ := strconv.Atoi(r["pid"])
		counts[id-1]++
	}
	return counts
}

// chiSquare tests observed counts of values against a discrete pmf over
// [lo, hi] (the tails folded into the end bins, bins with expected < 5
// merged) and fails when the statistic exceeds the 99.9 % quantile.
func chiSquare(t *testing.T, name string, obs []int, lo, hi int, pmf func(k int) float64) {
	t.Helper()
	freq := map[int]int{}
	for _, v := range obs {
		freq[min(max(v, lo), hi)]++
	}
	n := float64(len(obs))
	var stat float64
	var bins int
	var accO, accE float64
	for k := lo; k <= hi; k++ {
		p := pmf(k)
		if k == lo {
			for j := lo - 1; j >= lo-1000 && j >= 0; j-- {
				p += pmf(j)
			}
		}
		if k == hi {
			for j := hi + 1; j <= hi+1000; j++ {
				p += pmf(j)
			}
		}
		accO += float64(freq[k])
		accE += p * n
		if accE >= 5 || k == hi {
			stat += (accO - accE) * (accO - accE) / accE
			bins++
			accO, accE = 0, 0
		}
	}
	crit := distuv.ChiSquared{K: float64(bins - 1)}.Quantile(0.999)
	if stat > crit {
		t.Errorf("%s: χ² = %.1f over %d bins > %.1f (99.9 %%): the counts do not follow the distribution", name, stat, bins, crit)
	} else {
		t.Logf("%s: χ² = %.1f over %d bins (99.9 %% critical %.1f)", name, stat, bins, crit)
	}
}

func meanSD(v []int) (float64, float64) {
	var s, ss float64
	for _, x := range v {
		s += float64(x)
		ss += float64(x) * float64(x)
	}
	m := s / float64(len(v))
	return m, math.Sqrt(ss/float64(len(v)) - m*m)
}

// Rows per parent follow the spec's distribution, with a fixed seed:
// chi-square goodness of fit against the distribution's pmf, and mean and
// sd within four standard errors.
func TestPerParentDistributions(t *testing.T) {
	t.Parallel()
	const n = 4000
	t.Run("fixed", func(t *testing.T) {
		for i, c := range perParent(t, 50, "3") {
			if c != 3 {
				t.Fatalf("parent %d has %d children, want 3", i+1, c)
			}
		}
	})
	t.Run("uniform", func(t *testing.T) {
		c := perParent(t, n, "{dist: uniform, min: 1, max: 6}")
		chiSquare(t, "uniform 1..6", c, 1, 6, func(k int) float64 {
			if k < 1 || k > 6 {
				return 0
			}
			return 1.0 / 6
		})
	})
	t.Run("poisson", func(t *testing.T) {
		c := perParent(t, n, "{dist: poisson, mean: 4}")
		chiSquare(t, "poisson(4)", c, 0, 12, func(k int) float64 { return distuv.Poisson{Lambda: 4}.Prob(float64(k)) })
		m, sd := meanSD(c)
		if math.Abs(m-4) > 4*2/math.Sqrt(n) || math.Abs(sd*sd-4) > 0.6 {
			t.Errorf("poisson(4): mean %.3f variance %.3f", m, sd*sd)
		}
	})
	t.Run("binomial", func(t *testing.T) {
		c := perParent(t, 300, "{dist: binomial, n: 540, p: 0.75}")
		m, sd := meanSD(c)
		wantSD := math.Sqrt(540 * 0.75 * 0.25)
		if math.Abs(m-405) > 4*wantSD/math.Sqrt(300) || math.Abs(sd-wantSD) > 0.2*wantSD {
			t.Errorf("binomial(540, 0.75): mean %.2f sd %.2f, want 405 and %.2f", m, sd, wantSD)
		}
	})
	t.Run("normal", func(t *testing.T) {
		c := perParent(t, n, "{dist: normal, mean: 30, sd: 3}")
		m, sd := meanSD(c)
		if math.Abs(m-30) > 4*3/math.Sqrt(n) || math.Abs(sd-3) > 0.2 {
			t.Errorf("normal(30, 3): mean %.3f sd %.3f", m, sd)
		}
		// Rounded to whole rows: P(k) = Φ(k+½) − Φ(k−½).
		nd := distuv.Normal{Mu: 30, Sigma: 3}
		chiSquare(t, "normal(30, 3) rounded", c, 22, 38, func(k int) float64 { return nd.CDF(float64(k)+0.5) - nd.CDF(float64(k)-0.5) })
	})
	t.Run("normal clamped", func(t *testing.T) {
		for _, c := range perParent(t, 500, "{dist: normal, mean: 30, sd: 10, min: 25, max: 32}") {
			if c < 25 || c > 32 {
				t.Fatalf("count %d outside min 25, max 32", c)
			}
		}
	})
	t.Run("zipf", func(t *testing.T) {
		c := perParent(t, n, "{dist: zipf, s: 1.5, max: 20}")
		var z float64
		for k := 0; k <= 20; k++ {
			z += math.Pow(float64(k+1), -1.5)
		}
		chiSquare(t, "zipf(1.5) 0..20", c, 0, 20, func(k int) float64 {
			if k < 0 || k > 20 {
				return 0
			}
			return math.Pow(float64(k+1), -1.5) / z
		})
	})
}

// Field generators: weighted choices follow their weights, ints their
// distribution, dates stay in range, patterns and nulls hold.
func TestFieldGenerators(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `seed: 9
entities:
  x:
    count: 6000
    fields:
      id: {type: seq, start: 100, step: 10}
      c: {type: choice, values: [a, b, c], weights: [6, 3, 1]}
      age: {type: int, dist: normal, mean: 40, sd: 8, min: 18, max: 80}
      d: {type: date, from: 2024-01-01, to: 2024-01-31}
      code: {type: pattern, pattern: "AB-##-??\\#"}
      maybe: {type: word, null: 0.25}
      ok: {type: bool, p: 0.2}
      label: {type: template, template: "${c}-${id} $${literal}"}
      f: {type: float, min: 0, max: 1, decimals: 3}
`)
	dir := t.TempDir()
	generate(t, s, dir)
	rows := readCSV(t, filepath.Join(dir, "x.csv"))
	freq := map[string]int{}
	var ages []int
	nulls, oks := 0, 0
	for i, r := range rows {
		if r["id"] != strconv.Itoa(100+10*i) {
			t.Fatalf("row %d id %s", i, r["id"])
		}
		freq[r["c"]]++
		a, _ := strconv.Atoi(r["age"])
		if a < 18 || a > 80 {
			t.Fatalf("age %d out of range", a)
		}
		ages = append(ages, a)
		if r["d"] < "2024-01-01" || r["d"] > "2024-01-31" || len(r["d"]) != 10 {
			t.Fatalf("date %q out of range", r["d"])
		}
		if len(r["code"]) != 9 || !strings.HasPrefix(r["code"], "AB-") || !strings.HasSuffix(r["code"], "#") ||
			strings.Trim(r["code"][3:5], "0123456789") != "" || strings.Trim(r["code"][6:8], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("pattern %q", r["code"])
		}
		if r["maybe"] == "" {
			nulls++
		}
		if r["ok"] == "true" {
			oks++
		}
		if r["label"] != r["c"]+"-"+r["id"]+" ${literal}" {
			t.Fatalf("template %q", r["label"])
		}
		if f, err := strconv.ParseFloat(r["f"], 64); err != nil || f < 0 || f > 1 || len(r["f"]) != 5 {
			t.Fatalf("float %q", r["f"])
		}
	}
	obs := []int{}
	for k, v := range map[string]int{"a": 0, "b": 1, "c": 2} {
		for i := 0; i < freq[k]; i++ {
			obs = append(obs, v)
		}
	}
	chiSquare(t, "choice 6:3:1", obs, 0, 2, func(k int) float64 { return []float64{0.6, 0.3, 0.1}[min(max(k, 0), 2)] * b2f(k >= 0 && k <= 2) })
	m, sd := meanSD(ages)
	if math.Abs(m-40) > 0.4 || math.Abs(sd-8) > 0.4 {
		t.Errorf("age mean %.2f sd %.2f, want 40 and 8", m, sd)
	}
	if p := float64(nulls) / float64(len(rows)); math.Abs(p-0.25) > 0.03 {
		t.Errorf("null share %.3f, want 0.25", p)
	}
	if p := float64(oks) / float64(len(rows)); math.Abs(p-0.2) > 0.03 {
		t.Errorf("true share %.3f, want 0.2", p)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// JSON output is one valid array; NDJSON one object a line; values keep
// their JSON types, and nulls are null.
func TestJSONFormats(t *testing.T) {
	t.Parallel()
	s := mustParse(t, `format: json
entities:
  a:
    count: 3
    fields:
      id: seq
      n: {type: float, min: 1, max: 2, decimals: 1}
      b: bool
      s: {type: const, value: "quote \" and \\ and \u00e9"}
      z: {type: word, null: 1}
  e:
    count: 0
    fields: {id: seq}
`)
	dir := t.TempDir()
	generate(t, s, dir)
	var rows []map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "a.json"))
	if err := json.Unmarshal(b, &rows); err != nil || len(rows) != 3 {
		t.Fatalf("a.json: %v (%d rows)\n%s", err, len(rows), b)
	}
	for i, r := range rows {
		if r["id"] != float64(i+1) || r["z"] != nil || r["s"] != "quote \" and \\ and é" {
			t.Errorf("row %d: %v", i, r)
		}
		if _, ok := r["b"].(bool); !ok {
			t.Errorf("b is %T", r["b"])
		}
	}
	b, _ = os.ReadFile(filepath.Join(dir, "e.json"))
	if err := json.Unmarshal(b, &rows); err != nil || len(rows) != 0 {
		t.Errorf("empty entity: %v %q", err, b)
	}
}

// A cancelled generation leaves no file under its final name.
func TestCancelLeavesNoFiles(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "entities:\n  a:\n    count: 100000\n    fields: {id: seq}\n")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Generate(ctx, s, Options{Dir: dir}); err == nil {
		t.Fatal("no error from a cancelled generation")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("left %d files: %v", len(ents), ents)
	}
}

// Table gives an entity's rows in memory exactly as Generate writes them
// to its CSV file with the same seed and scale.
func TestTableEqualsFile(t *testing.T) {
	t.Parallel()
	s, err := LoadFile(schoolSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := Generate(context.Background(), s, Options{Dir: dir, Scale: 0.005}); err != nil {
		t.Fatal(err)
	}
	cols, rows, err := Table(context.Background(), s, "students", Options{Scale: 0.005})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "students.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(cols, ",") != strings.Join(recs[0], ",") || len(rows) != len(recs)-1 || len(rows) == 0 {
		t.Fatalf("columns %v vs %v, %d rows vs %d", cols, recs[0], len(rows), len(recs)-1)
	}
	for i, r := range rows {
		if strings.Join(r, ",") != strings.Join(recs[i+1], ",") {
			t.Fatalf("row %d: %v, the file has %v", i, r, recs[i+1])
		}
	}
	if _, _, err := Table(context.Background(), s, "responses", Options{Scale: 0.005, MaxRows: 1000}); !errors.Is(err, ErrTooManyRows) {
		t.Errorf("MaxRows: %v", err)
	}
}
