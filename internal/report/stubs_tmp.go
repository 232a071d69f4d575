package report

import "github.com/plateau-perf/plateau/internal/report/doc"

func (b *builder) usersChart() *doc.Figure        { return nil }
func (b *builder) timeCharts() []*doc.Figure      { return nil }
func (b *builder) distributionChart() *doc.Figure { return nil }
func (b *builder) errorChart() *doc.Figure        { return nil }
func (b *builder) monitorsTable() []doc.Block     { return nil }
func (b *builder) resources() doc.Section {
	return doc.Section{ID: SecResources, Title: "Resources", Blocks: []doc.Block{noData("No monitor data.")}}
}
func (b *builder) capacity() doc.Section {
	return doc.Section{ID: SecCapacity, Title: "Capacity", Blocks: []doc.Block{noData("Capacity analysis not available yet.")}}
}
func (b *builder) trends() doc.Section {
	return doc.Section{ID: SecTrends, Title: "Trends", Blocks: []doc.Block{noData("Trend analysis not available yet.")}}
}
func (b *builder) comparison() doc.Section {
	return doc.Section{ID: SecComparison, Title: "Comparison", Blocks: []doc.Block{noData("No baseline given.")}}
}
