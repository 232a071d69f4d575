package k6

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvert: any input is rejected with an error or converted into a
// plan and a report that can be written; never a panic or a hang.
func FuzzConvert(f *testing.F) {
	for _, n := range []string{"01.basic.js", "09.data.js", "08.arrival-rate.js"} {
		b, err := os.ReadFile(filepath.Join("..", "wiretest", "testdata", "k6", "quickpizza", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	b, err := os.ReadFile(filepath.Join("..", "wiretest", "testdata", "k6", "units", "flow.js"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("export default function f() { f(); for (let i = 0; i < 1000000; i++) { f(); } }"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.js", data)
		if err != nil {
			return
		}
		p, rep := Convert(s, Options{Source: filepath.Join(t.TempDir(), "fuzz.js")})
		if _, err := p.Bytes(); err != nil {
			t.Fatalf("writing plan: %v", err)
		}
		var w bytes.Buffer
		if _, err := rep.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
	})
}
