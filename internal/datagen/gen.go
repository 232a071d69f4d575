package datagen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/brianvoe/gofakeit/v7/data"
	"gonum.org/v1/gonum/stat/distuv"
)

// Options change one generation.
type Options struct {
	// Dir is the output directory (created if missing).
	Dir string
	// Scale, when > 0, replaces the spec's scale; Seed, when non-nil, its
	// seed.
	Scale float64
	Seed  *uint64
	// MaxRows, when > 0, stops a generation that would write more rows
	// in all (an error, not a cut).
	MaxRows int64
}

// Result is what a generation wrote; datagen.json in the output directory
// holds it.
type Result struct {
	Seed      uint64         `json:"seed"`
	Scale     float64        `json:"scale"`
	Entities  []EntityResult `json:"entities"`
	Rows      int64          `json:"rows"`
	Bytes     int64          `json:"bytes"`
	DurationS float64        `json:"duration_s"`
}

// EntityResult is one entity's output.
type EntityResult struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	Format string `json:"format"`
	Parent string `json:"parent,omitempty"`
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	// Expected is the row count the model expects (root count × the mean
	// rows per parent down the chain, before rounding and clamping).
	Expected float64 `json:"expected_rows"`
	// PerParent describes the rows made per parent row; nil for a root.
	PerParent *PerParent `json:"per_parent,omitempty"`
}

// PerParent is the spread of a child entity's rows per parent row.
type PerParent struct {
	Parents int64   `json:"parents"`
	Mean    float64 `json:"mean"`
	SD      float64 `json:"sd"`
	Min     int64   `json:"min"`
	Max     int64   `json:"max"`
}

// ErrTooManyRows is the error of a generation that reached Options.MaxRows.
var ErrTooManyRows = errors.New("datagen: more rows than allowed")

// ManifestFile is the file in the output directory that describes what
// was generated (Result as JSON).
const ManifestFile = "datagen.json"

// value is one generated cell.
type value struct {
	kind byte // kInt, kFloat, kStr, kBool
	null bool
	i    int64
	f    float64
	s    string
}

const (
	kStr byte = iota
	kInt
	kFloat
	kBool
)

// gen is one generation's state: one random stream (so the output depends
// only on the spec, the seed and the scale) and one state per entity.
type gen struct {
	spec    *Spec
	scale   float64
	src     rand.Source
	rng     *rand.Rand
	faker   *gofakeit.Faker
	ents    map[*Entity]*entState
	ctx     context.Context
	rows    int64
	err     error // a generator's failure, checked after each row
	maxRows int64
	seed    uint64
}

// entState is an entity's current row (its children read it while they are
// made), its compiled fields, its writer and its counters.
type entState struct {
	e        *Entity
	row      []value
	fields   []compiled
	w        rowWriter
	rows     int64
	bytes    int64
	perCount func() int64
	pp       PerParent
	sumSq    float64
	anc      []*entState // ancestors: anc[0] the parent
}

type compiled struct {
	f    *Field
	kind byte
	make func(st *entState) value
	next int64 // seq
}

// Generate writes the spec's data into o.Dir: one file per entity and
// datagen.json. Files are written under a temporary name and renamed at
// the end, so a failed or cancelled generation leaves no partial file
// under the final name.
func Generate(ctx context.Context, s *Spec, o Options) (*Result, error) {
	start := time.Now()
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	g, err := run(ctx, s, o, func(e *Entity) (rowWriter, error) {
		return newRowWriter(filepath.Join(o.Dir, e.File), e)
	})
	if err != nil {
		return nil, err
	}
	res := &Result{Seed: g.seed, Scale: g.scale}
	for _, e := range s.Entities {
		st := g.ents[e]
		er := EntityResult{Name: e.Name, File: e.File, Format: e.Format, Parent: e.Parent, Rows: st.rows, Bytes: st.bytes,
			Expected: g.expected(e)}
		if e.parent != nil {
			pp := st.pp
			if pp.Parents > 0 {
				pp.Mean = float64(st.rows) / float64(pp.Parents)
				pp.SD = math.Sqrt(max(0, st.sumSq/float64(pp.Parents)-pp.Mean*pp.Mean))
			}
			er.PerParent = &pp
		}
		res.Entities = append(res.Entities, er)
		res.Rows += st.rows
		res.Bytes += st.bytes
	}
	res.DurationS = time.Since(start).Seconds()
	if err := writeManifest(filepath.Join(o.Dir, ManifestFile), res); err != nil {
		return nil, err
	}
	return res, nil
}

// Table makes the spec's data in memory and returns one entity's rows as
// text (the values a CSV file would hold; a null is ""), for a plan's
// data feeder. The other entities are made and dropped, so the rows are
// exactly those Generate writes with the same seed and scale. o.Dir is
// not used; set o.MaxRows to bound the memory.
func Table(ctx context.Context, s *Spec, entity string, o Options) (cols []string, rows [][]string, err error) {
	t := s.Entity(entity)
	if t == nil {
		return nil, nil, fmt.Errorf("datagen: %s has no entity %q", s.File, entity)
	}
	mem := &memWriter{e: t}
	if _, err := run(ctx, s, o, func(e *Entity) (rowWriter, error) {
		if e == t {
			return mem, nil
		}
		return discard{}, nil
	}); err != nil {
		return nil, nil, err
	}
	for _, f := range t.Fields {
		cols = append(cols, f.Name)
	}
	return cols, mem.rows, nil
}

// run makes every row of the spec into the writers open gives, depth
// first: each root row, then its children's rows (each with theirs), so
// only one row per entity is held at any time. It closes and commits the
// writers, or aborts them all on an error.
func run(ctx context.Context, s *Spec, o Options, open func(*Entity) (rowWriter, error)) (*gen, error) {
	g := &gen{spec: s, scale: s.Scale, ctx: ctx, ents: map[*Entity]*entState{}, maxRows: o.MaxRows, seed: s.Seed}
	if o.Scale > 0 {
		g.scale = o.Scale
	}
	if o.Seed != nil {
		g.seed = *o.Seed
	}
	g.src = rand.NewPCG(g.seed, g.seed^0x9e3779b97f4a7c15)
	g.rng = rand.New(g.src)
	g.faker = gofakeit.NewFaker(g.src, false)
	for _, e := range s.Entities {
		st, err := g.compile(e)
		if err != nil {
			return nil, err
		}
		g.ents[e] = st
	}
	var opened []*entState
	fail := func(err error) (*gen, error) {
		for _, st := range opened {
			st.w.abort()
		}
		return nil, err
	}
	for _, e := range s.Entities {
		st := g.ents[e]
		for a := e.parent; a != nil; a = a.parent {
			st.anc = append(st.anc, g.ents[a])
		}
		w, err := open(e)
		if err != nil {
			return fail(err)
		}
		st.w = w
		opened = append(opened, st)
	}
	for _, e := range s.Entities {
		if e.parent != nil {
			continue
		}
		n := e.rows(g.scale)
		for i := int64(0); i < n; i++ {
			if err := g.emit(g.ents[e]); err != nil {
				return fail(err)
			}
		}
	}
	for _, e := range s.Entities {
		st := g.ents[e]
		n, err := st.w.close()
		if err != nil {
			return fail(fmt.Errorf("datagen: writing %s: %w", e.File, err))
		}
		st.bytes = n
	}
	for _, st := range opened {
		if err := st.w.commit(); err != nil {
			return fail(fmt.Errorf("datagen: %w", err))
		}
	}
	return g, nil
}

func (g *gen) expected(e *Entity) float64 {
	if e.parent == nil {
		return float64(e.rows(g.scale))
	}
	return g.expected(e.parent) * e.PerParent.mean()
}

// emit makes one row of st's entity, writes it, then makes its children.
func (g *gen) emit(st *entState) error {
	g.rows++
	if g.maxRows > 0 && g.rows > g.maxRows {
		return fmt.Errorf("%w (%d)", ErrTooManyRows, g.maxRows)
	}
	if g.rows&4095 == 0 {
		if err := g.ctx.Err(); err != nil {
			return err
		}
	}
	for i := range st.fields {
		c := &st.fields[i]
		if c.f.NullP > 0 && g.rng.Float64() < c.f.NullP {
			st.row[i] = value{kind: c.kind, null: true}
			if c.f.Type == "seq" {
				c.next += c.f.Step
			}
			continue
		}
		v, err := g.value(st, c)
		if err != nil {
			return err
		}
		st.row[i] = v
	}
	if g.err != nil {
		return g.err
	}
	if err := st.w.write(st.row); err != nil {
		return fmt.Errorf("datagen: writing %s: %w", st.e.File, err)
	}
	st.rows++
	for _, child := range st.e.children {
		cs := g.ents[child]
		n := cs.perCount()
		cs.pp.Parents++
		if cs.pp.Parents == 1 || n < cs.pp.Min {
			cs.pp.Min = n
		}
		cs.pp.Max = max(cs.pp.Max, n)
		cs.sumSq += float64(n) * float64(n)
		for j := int64(0); j < n; j++ {
			if err := g.emit(cs); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gen) value(st *entState, c *compiled) (value, error) {
	if c.f.Type == "seq" {
		v := value{kind: kInt, i: c.next}
		c.next += c.f.Step
		return v, nil
	}
	v := c.make(st)
	if v.kind == kFloat && (math.IsNaN(v.f) || math.IsInf(v.f, 0)) {
		return v, fmt.Errorf("datagen: %s.%s: the distribution gave %v; bound it with min and max", st.e.Name, c.f.Name, v.f)
	}
	return v, nil
}

// sampler draws from a distribution: whole numbers (counts and int
// fields) or reals.
func (g *gen) sampler(d Dist, whole bool) func() float64 {
	var draw func() float64
	switch d.Kind {
	case "fixed":
		v := d.Value
		draw = func() float64 { return v }
	case "uniform":
		if whole {
			lo, hi := math.Ceil(d.Min), math.Floor(d.Max)
			u := distuv.Uniform{Min: lo, Max: hi + 1, Src: g.src}
			draw = func() float64 { return math.Min(math.Floor(u.Rand()), hi) }
		} else {
			u := distuv.Uniform{Min: d.Min, Max: d.Max, Src: g.src}
			draw = u.Rand
		}
	case "normal":
		n := distuv.Normal{Mu: d.Mean, Sigma: d.SD, Src: g.src}
		draw = n.Rand
	case "poisson":
		p := distuv.Poisson{Lambda: d.Mean, Src: g.src}
		draw = p.Rand
	case "binomial":
		b := distuv.Binomial{N: float64(d.N), P: d.P, Src: g.src}
		draw = b.Rand
	case "exponential":
		e := distuv.Exponential{Rate: 1 / d.Mean, Src: g.src}
		draw = e.Rand
	case "lognormal":
		l := distuv.LogNormal{Mu: d.Mean, Sigma: d.SD, Src: g.src}
		draw = l.Rand
	case "zipf":
		// math/rand/v2's Zipf: P(k) ∝ (1+k)^-s for k in [0, max−min].
		z := rand.NewZipf(g.rng, d.S, 1, uint64(d.Max-d.Min))
		lo := d.Min
		draw = func() float64 { return lo + float64(z.Uint64()) }
	default:
		draw = func() float64 { return 0 }
	}
	lo, hi, hasLo, hasHi := d.Min, d.Max, d.HasMin, d.HasMax
	return func() float64 {
		v := draw()
		if whole {
			v = math.Round(v)
		}
		if hasLo && v < lo {
			v = lo
		}
		if hasHi && v > hi {
			v = hi
		}
		return v
	}
}

// compile prepares an entity's fields.
func (g *gen) compile(e *Entity) (*entState, error) {
	st := &entState{e: e, row: make([]value, len(e.Fields))}
	if e.parent != nil {
		draw := g.sampler(e.PerParent, true)
		st.perCount = func() int64 { return int64(max(0, draw())) }
	}
	for _, f := range e.Fields {
		c := compiled{f: f, kind: kStr, next: f.Start}
		if err := g.compileField(e, f, &c); err != nil {
			return nil, err
		}
		st.fields = append(st.fields, c)
	}
	return st, nil
}

func (g *gen) compileField(e *Entity, f *Field, c *compiled) error {
	rng := g.rng
	str := func(fn func() string) func(*entState) value {
		return func(*entState) value { return value{kind: kStr, s: fn()} }
	}
	pick := func(list []string) func() string {
		return func() string { return list[rng.IntN(len(list))] }
	}
	switch f.Type {
	case "seq":
		c.kind = kInt
	case "uuid":
		c.make = str(g.faker.UUID)
	case "first_name":
		c.make = str(pick(data.Person["first"]))
	case "last_name":
		c.make = str(pick(data.Person["last"]))
	case "name":
		first, last := pick(data.Person["first"]), pick(data.Person["last"])
		c.make = str(func() string { return first() + " " + last() })
	case "word":
		c.make = str(pick(data.Lorem["word"]))
	case "words":
		n := g.sampler(f.Dist, true)
		word := pick(data.Lorem["word"])
		c.make = str(func() string {
			k := int(min(max(0, n()), maxWords))
			var b strings.Builder
			for i := 0; i < k; i++ {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(word())
			}
			return b.String()
		})
	case "fake":
		info := gofakeit.GetFuncLookup(f.Fake)
		if info == nil {
			return fmt.Errorf("datagen: field %s: unknown fake function %q", f.Name, f.Fake)
		}
		name := f.Name
		c.make = func(*entState) value {
			v, err := info.Generate(g.faker, &gofakeit.MapParams{}, info)
			if err != nil && g.err == nil {
				g.err = fmt.Errorf("datagen: %s.%s: fake %s: %w", e.Name, name, f.Fake, err)
			}
			return value{kind: kStr, s: fmt.Sprint(v)}
		}
	case "int":
		c.kind = kInt
		draw := g.sampler(f.Dist, true)
		c.make = func(*entState) value { return value{kind: kInt, i: int64(draw())} }
	case "float":
		c.kind = kFloat
		draw := g.sampler(f.Dist, false)
		scale := math.Pow(10, float64(f.Decimals))
		c.make = func(*entState) value { return value{kind: kFloat, f: math.Round(draw()*scale) / scale} }
	case "bool":
		c.kind = kBool
		p := f.P
		c.make = func(*entState) value {
			if rng.Float64() < p {
				return value{kind: kBool, i: 1}
			}
			return value{kind: kBool}
		}
	case "date", "datetime":
		from, to, layout := f.From, f.To, f.Layout
		step := int64(1)
		if f.Type == "date" {
			step = 86400
		}
		n := (to-from)/step + 1
		c.make = str(func() string {
			return time.Unix(from+rng.Int64N(n)*step, 0).UTC().Format(layout)
		})
	case "choice":
		values := f.Values
		if len(f.Weights) == 0 {
			c.make = str(pick(values))
			break
		}
		cat := distuv.NewCategorical(f.Weights, g.src)
		c.make = str(func() string { return values[int(cat.Rand())] })
	case "const":
		v := f.Value
		c.make = str(func() string { return v })
	case "pattern":
		pat := f.Pattern
		c.make = str(func() string { return g.pattern(pat) })
	case "parent":
		a, name, depth := e.parent, f.Field, 0
		for rest, ok := strings.CutPrefix(name, "parent."); ok; rest, ok = strings.CutPrefix(name, "parent.") {
			a, name, depth = a.parent, rest, depth+1
		}
		idx := a.fieldIndex(name, len(a.Fields))
		c.kind = kindOf(a.Fields[idx])
		c.make = func(st *entState) value { return st.anc[depth].row[idx] }
	case "ref":
		t := g.spec.Entity(f.Entity)
		idf := t.field(t.ID)
		n := t.rows(g.scale)
		start, step := idf.Start, idf.Step
		c.kind = kInt
		if f.Dist.Kind == "zipf" {
			z := rand.NewZipf(rng, f.Dist.S, 1, uint64(n-1))
			c.make = func(*entState) value { return value{kind: kInt, i: start + int64(z.Uint64())*step} }
		} else {
			c.make = func(*entState) value { return value{kind: kInt, i: start + rng.Int64N(n)*step} }
		}
	case "template":
		c.make = g.template(e, f)
	default:
		return fmt.Errorf("datagen: field %s: no generator for type %q", f.Name, f.Type)
	}
	return nil
}

// maxWords bounds a words field's word count.
const maxWords = 10000

// kindOf is the value kind a field makes.
func kindOf(f *Field) byte {
	switch f.Type {
	case "seq", "int", "ref":
		return kInt
	case "float":
		return kFloat
	case "bool":
		return kBool
	}
	return kStr
}

// template compiles a template into parts: literal text, or a cell of the
// row (depth 0) or of an ancestor's current row.
func (g *gen) template(e *Entity, f *Field) func(*entState) value {
	type part struct {
		lit        string
		depth, idx int
		ref        bool
	}
	var parts []part
	t := f.Template
	pos := 0
	for _, r := range templateRefs(t) {
		parts = append(parts, part{lit: strings.ReplaceAll(t[pos:r.start], "$${", "${")})
		a, depth := e, 0
		for _, step := range r.path[:len(r.path)-1] {
			_ = step // "parent", checked at parse time
			a, depth = a.parent, depth+1
		}
		parts = append(parts, part{ref: true, depth: depth, idx: a.fieldIndex(r.path[len(r.path)-1], len(a.Fields))})
		pos = r.end
	}
	parts = append(parts, part{lit: strings.ReplaceAll(t[pos:], "$${", "${")})
	var b []byte
	return func(st *entState) value {
		b = b[:0]
		for _, p := range parts {
			if !p.ref {
				b = append(b, p.lit...)
				continue
			}
			row := st.row
			if p.depth > 0 {
				row = st.anc[p.depth-1].row
			}
			b = appendText(b, &row[p.idx], st, p.depth, p.idx)
		}
		return value{kind: kStr, s: string(b)}
	}
}

// appendText appends a cell as text (empty for null).
func appendText(b []byte, v *value, st *entState, depth, idx int) []byte {
	if v.null {
		return b
	}
	switch v.kind {
	case kInt:
		return strconv.AppendInt(b, v.i, 10)
	case kFloat:
		e := st.e
		if depth > 0 {
			e = st.anc[depth-1].e
		}
		return strconv.AppendFloat(b, v.f, 'f', e.Fields[idx].Decimals, 64)
	case kBool:
		return strconv.AppendBool(b, v.i != 0)
	}
	return append(b, v.s...)
}

// pattern fills a pattern: # a digit, ? an upper-case letter, * a letter
// or digit, \ takes the next character as it is.
func (g *gen) pattern(p string) string {
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const alnum = letters + "0123456789"
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '#':
			b = append(b, byte('0'+g.rng.IntN(10)))
		case '?':
			b = append(b, letters[g.rng.IntN(len(letters))])
		case '*':
			b = append(b, alnum[g.rng.IntN(len(alnum))])
		case '\\':
			if i+1 < len(p) {
				i++
				b = append(b, p[i])
			}
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// fakeNames lists gofakeit's function names, for suggestions.
func fakeNames() []string {
	out := make([]string, 0, len(gofakeit.FuncLookups))
	for k := range gofakeit.FuncLookups {
		out = append(out, k)
	}
	return out
}

// fakeProbe is a faker for checking fake functions at parse time, apart
// from any generation's random stream.
func fakeProbe() *gofakeit.Faker { return gofakeit.NewFaker(rand.NewPCG(1, 2), false) }

func fakeValue(f *gofakeit.Faker, name string) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("it panicked: %v", r)
		}
	}()
	info := gofakeit.GetFuncLookup(name)
	if info == nil {
		return nil, errors.New("unknown")
	}
	return info.Generate(f, &gofakeit.MapParams{}, info)
}
