package report

import (
	"maps"
	"slices"

	"github.com/plateau-perf/plateau/internal/report/doc"
)

// skippedBlocks states how many iterations an on_fail rule ended early, per
// workload: their remaining steps were never sent, so a reader comparing
// request counts between labels needs to know. Nothing when none were.
func (b *builder) skippedBlocks() []doc.Block {
	var parts []string
	var total int64
	for _, w := range slices.Sorted(maps.Keys(b.s.Skipped)) {
		n := b.s.Skipped[w]
		if n <= 0 {
			continue
		}
		total += n
		parts = append(parts, b.T("%s in %s", b.thousands(n), b.red.String(w)))
	}
	if total == 0 {
		return nil
	}
	return []doc.Block{&doc.Para{Text: sentences(
		sentence(b.T("%s ended early by an on_fail rule (%s)", b.plural(total, "iteration"), b.joinAnd(parts))),
		sentence(b.W("the steps after the failure were not sent, so later labels count fewer requests than earlier ones")))}}
}
