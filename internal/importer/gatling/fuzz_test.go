package gatling

import (
	"bytes"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// FuzzDecode: any bytes decode without a panic, every non-blank line is a
// record, a counted problem or a record kind that carries no sample, and
// no sample has a negative response time.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"RUN\tsim.Shop\tshop\t1700000000000\t \t3.9.5\nUSER\tbuyers\tSTART\t1700000000010\n",
		"REQUEST\t\thome\t1700000000020\t1700000000032\tOK\t \n",
		"REQUEST\tbuyers\t1\tcheckout,card\tauth\t1700000000100\t1700000000107\tKO\tstatus.find.is(200), but actually found 503\n",
		"GROUP\tcheckout\t1700000000040\t1700000000110\t57\tKO\nUSER\tbuyers\t1\tEND\t1700000000010\t1700000000120\n",
		"ERROR\tboom\t1700000000000\nASSERTION\tAAEDAAEF\n\t\t\t\nREQUEST\tOK\tOK\t1\t0\tOK\n",
	} {
		f.Add([]byte(s))
	}
	lbl := importer.NewLabels()
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &decoder{labels: lbl.NewCache()}
		b := &batch{}
		d.decode(data, 1, b)
		lines := int64(bytes.Count(data, []byte{'\n'}) + 1)
		if int64(len(b.recs))+int64(len(b.users)) > lines {
			t.Fatalf("%d records and %d user events from %d lines", len(b.recs), len(b.users), lines)
		}
		for _, r := range b.recs {
			if r.Elapsed < 0 {
				t.Fatalf("negative response time %d", r.Elapsed)
			}
		}
		if b.requests+b.groups != int64(len(b.recs)) {
			t.Fatalf("%d requests + %d groups, %d records", b.requests, b.groups, len(b.recs))
		}
	})
}
