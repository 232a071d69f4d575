package datagen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Every mistake in a spec is reported at once, each at file:line:column.
func TestBadSpecs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"syntax", "entities:\n  a: {count: 1\n", []string{"spec.yaml:2:6: YAML syntax"}},
		{"empty", "", []string{"spec.yaml:1:1: spec is empty"}},
		{"top level", "seed: -1\nscale: 0\nformat: xml\nentites: {}\n", []string{
			`spec.yaml:1:7: seed must not be negative`,
			`spec.yaml:2:8: scale must be positive`,
			`spec.yaml:3:9: format "xml" is not csv, ndjson or json`,
			`spec.yaml:4:1: unknown key "entites" in spec (did you mean "entities"?)`,
			`spec.yaml:1:1: spec: missing entities`,
		}},
		{"entities", `entities:
  a:
    count: ten
    fields: {id: seq}
  b:
    parent: c
    per_parent: 2
    fields: {id: seq}
  d:
    parent: a
    count: 3
    fields: {id: seq}
  e:
    parent: a
    fields: {id: seq}
  f:
    count: 1
    file: ../x.csv
    fields: {id: seq}
  g:
    count: 1
  h:
    parent: h
    per_parent: 1
    fields: {id: seq}
`, []string{
			`spec.yaml:3:12: count: expected a number, got "ten"`,
			`spec.yaml:5:3: entity b: parent "c" is not an entity of this spec`,
			`spec.yaml:11:5: entity d has a parent: give per_parent (rows per a row), not count`,
			`spec.yaml:13:3: entity e: missing per_parent`,
			`spec.yaml:18:11: file "../x.csv" must be a relative path inside the output directory`,
			`spec.yaml:20:3: entity g: missing fields`,
			`spec.yaml:22:3: entity h: its parents form a cycle`,
		}},
		{"distributions", `entities:
  a:
    count: 10
    fields: {id: seq}
  b:
    parent: a
    per_parent: {dist: gauss, mean: 3}
    fields: {id: seq}
  c:
    parent: a
    per_parent: {dist: normal, mean: 3}
    fields: {id: seq}
  d:
    parent: a
    per_parent: {dist: binomial, n: 10, p: 1.5}
    fields: {id: seq}
  e:
    parent: a
    per_parent: {dist: zipf, s: 1, max: 10}
    fields: {id: seq}
  f:
    parent: a
    per_parent: {dist: uniform, min: 5, max: 2}
    fields: {id: seq}
  g:
    parent: a
    per_parent: 2.5
    fields: {id: seq}
  h:
    parent: a
    per_parent: {dist: poisson, mean: 2, sd: 1}
    fields: {id: seq}
`, []string{
			`spec.yaml:7:24: per_parent: unknown distribution "gauss"`,
			`spec.yaml:11:17: per_parent: normal distribution needs sd`,
			`spec.yaml:15:44: per_parent.p must be between 0 and 1`,
			`spec.yaml:19:33: per_parent.s must be greater than 1`,
			`spec.yaml:23:46: per_parent: max 2 is less than min 5`,
			`spec.yaml:27:17: per_parent: a fixed count must be a whole number ≥ 0, got 2.5`,
			`spec.yaml:31:42: per_parent: sd does not apply to a poisson distribution (it takes mean, min, max)`,
		}},
		{"fields", `entities:
  a:
    count: 2
    fields:
      id: seqq
      n: {type: integer}
      m: {type: int}
      k: {type: int, min: 1, max: 3, decimals: 2}
      d: {type: date, from: 2024-02-30, to: 2024-01-01}
      c: {type: choice, values: [x, y], weights: [1]}
      t: {type: template, template: "${later} ${nope} ${parent.x} ${a b}"}
      later: seq
      p: parent.id
      f: {type: fake, fake: citty}
      r: {type: ref, entity: b}
      q: {type: bool, p: 2}
  b:
    parent: a
    per_parent: 1
    fields:
      x: {type: parent, field: idd}
      y: {type: template, template: "${parent.parent.id}"}
      r: {type: ref, entity: b}
`, []string{
			`spec.yaml:5:11: field id: "seqq" is not a field type written alone`,
			`(did you mean "seq"?)`,
			`spec.yaml:6:17: field n: unknown type "integer"`,
			`spec.yaml:7:10: field m: int needs a distribution`,
			`spec.yaml:8:38: field k: decimals does not apply to type int`,
			`spec.yaml:9:29: field d: from: "2024-02-30" is not a date`,
			`spec.yaml:10:50: field c: 1 weights for 2 values`,
			`spec.yaml:11:7: field t: template: ${later} is made after this field; list it first`,
			`spec.yaml:11:7: field t: template: ${nope}: no earlier field "nope" in a`,
			`spec.yaml:11:7: field t: template: ${parent.x}: entity a has no parent`,
			`spec.yaml:11:7: field t: template: ${a b} is not a field name or parent.field`,
			`spec.yaml:13:7: field p: entity a has no parent`,
			`spec.yaml:14:29: field f: unknown fake function "citty" (did you mean "city"?)`,
			`spec.yaml:15:7: field r: ref: b has a parent`,
			`spec.yaml:16:26: field q: p must be between 0 and 1`,
			`spec.yaml:21:7: field x: a has no field "idd" (did you mean "id"?)`,
			`spec.yaml:22:7: field y: template: ${parent.parent.id}: entity a has no parent`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("spec.yaml", []byte(tc.src))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("got %v, want spec errors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("missing %q in:\n%s", w, err)
				}
			}
		})
	}
}

// FuzzParse: any input gives a spec or errors, never a panic; a spec that
// parses generates (a few rows) without a panic either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"entities:\n  a: {count: 3, fields: {id: seq, n: name}}\n",
		"entities:\n  a: {count: 2, fields: {id: seq}}\n  b: {parent: a, per_parent: {dist: poisson, mean: 2}, fields: {p: parent.id, t: {type: template, template: \"${p}-${parent.id}\"}}}\n",
		"format: json\nentities:\n  x: {count: 1, fields: {c: {type: choice, values: [a], weights: [1]}, d: {type: date, from: 2020-01-01, to: 2020-01-02}}}\n",
		"entities: &a\n  x: *a\n",
		"entities:\n  a: {count: 1, fields: {r: {type: ref, entity: a, dist: zipf, s: 2}, id: seq}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("fuzz.yaml", src)
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %v is not a list of spec errors", err)
			}
			return
		}
		// Bound the work: generate only small specs.
		if s.Expected(s.Entities[0]) > 100 {
			return
		}
		for _, e := range s.Entities {
			if s.Expected(e) > 1000 || e.PerParent.Kind == "zipf" && e.PerParent.Max > 1000 {
				return
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, _ = Generate(ctx, s, Options{Dir: t.TempDir(), MaxRows: 5000})
	})
}
