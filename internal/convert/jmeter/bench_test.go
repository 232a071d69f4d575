package jmeter

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
)

// largePlan builds a plan of at least size bytes from FOLIO's
// check-in/check-out plan (reference 001, 243 KB; the harness's copy): its
// thread group repeated, each copy renamed, as a plan that grew one
// workflow at a time looks.
func largePlan(tb testing.TB, size int) []byte {
	tb.Helper()
	src, err := os.ReadFile("../wiretest/testdata/folio-cico/circulation_checkInCheckOut_orchid.jmx")
	if err != nil {
		tb.Fatal(err)
	}
	s := string(src)
	from := strings.Index(s, "<ThreadGroup ")
	tg := strings.Index(s, "</ThreadGroup>")
	if from < 0 || tg < from {
		tb.Fatal("the plan's thread group was not found")
	}
	// The thread group's hashTree: from the next <hashTree> to its match.
	i := strings.Index(s[tg:], "<hashTree>") + tg + len("<hashTree>")
	for depth := 1; depth > 0; {
		open, shut := strings.Index(s[i:], "<hashTree>"), strings.Index(s[i:], "</hashTree>")
		if shut < 0 {
			tb.Fatal("unbalanced hashTree")
		}
		if open >= 0 && open < shut {
			depth++
			i += open + len("<hashTree>")
			continue
		}
		depth--
		i += shut + len("</hashTree>")
	}
	group := s[from:i]
	var b strings.Builder
	b.WriteString(s[:i])
	for n := 2; b.Len() < size; n++ {
		b.WriteString("\n      ")
		b.WriteString(strings.Replace(group, `testname="User-flow"`, fmt.Sprintf(`testname="User-flow %d"`, n), 1))
	}
	b.WriteString(s[i:])
	return []byte(b.String())
}

// BenchmarkConvertLargePlan is issue 33's speed goal: a 2 MB plan parses
// and converts in under a second (the CLI adds the written plan's check;
// docs/performance.md has both).
func BenchmarkConvertLargePlan(b *testing.B) {
	data := largePlan(b, 2<<20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		root, err := Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		p, _ := Convert(root, Options{Source: "large.jmx"})
		if len(p.Workloads) < 8 {
			b.Fatalf("%d workloads from the repeated thread groups", len(p.Workloads))
		}
	}
}
