package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/plan"
)

// loadFeeder loads a plan whose feeder d reads path with order, the file
// kept in memory or indexed (read row by row from the file).
func loadFeeder(t *testing.T, dir, order string, indexed bool) *plan.Feeder {
	t.Helper()
	src := fmt.Sprintf(`name: f
target: http://127.0.0.1:9
data:
  d: {csv: d.csv, order: %s}
workloads:
  w:
    scenario: [{request: {url: "/x/${d.id}"}}]
    load: {users: 1, iterations: 1}
`, order)
	var inMem int64
	if indexed {
		inMem = 1
	}
	p, err := plan.Parse("f.yaml", []byte(src), dir, plan.Options{FeederInMemory: inMem})
	if err != nil {
		t.Fatal(err)
	}
	f := p.Data["d"]
	if (f.Index != nil) != indexed {
		t.Fatalf("indexed %v, want %v", f.Index != nil, indexed)
	}
	return f
}

// Every order hands out the same rows from an indexed file as from
// memory: sequential and unique in file order (unique once each, then
// none), segmented generators their share, random uniformly chosen rows.
func TestIndexedFeederOrders(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,name\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%d,\"user, %d\"\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, order := range []string{plan.OrderSequential, plan.OrderUnique, plan.OrderRandom} {
		for _, seg := range []int{0, 1} {
			mem := newFeeder(loadFeeder(t, dir, order, false), seg, 2)
			idx := newFeeder(loadFeeder(t, dir, order, true), seg, 2)
			r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			for i := range 250 {
				a, b := mem.next(r1), idx.next(r2)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("%s seg %d take %d: in memory %q, indexed %q", order, seg, i, a, b)
				}
				if order == plan.OrderUnique && i >= 100 && b != nil {
					t.Fatalf("unique seg %d gave a row past its 100: %q", seg, b)
				}
			}
			if idx.readErr.Load() != nil {
				t.Fatalf("%s: %v", order, *idx.readErr.Load())
			}
		}
	}
}
