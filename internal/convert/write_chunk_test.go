package convert

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
)

// TestChunkedStepsSameText: a long step list written in pieces is the
// same text as written in one tree — comments between steps, nested
// transactions and multi-line bodies included — and loads as a plan.
func TestChunkedStepsSameText(t *testing.T) {
	p := &Plan{Name: "long", Target: "http://127.0.0.1:1"}
	wl := &Workload{Name: "w", Load: Load{Users: "1", Iterations: "1"}}
	for i := range 1000 {
		body := fmt.Sprintf("line one %d\nline two: ${x}\n\nafter a blank", i)
		r := &Request{Name: fmt.Sprintf("r%d", i), Method: "POST", URL: fmt.Sprintf("/items/%d?q=yes", i), Body: &body,
			Headers: []KV{{"Content-Type", "text/plain"}}, Check: Check{Status: []int{200}}}
		switch {
		case i%97 == 0:
			wl.Scenario = append(wl.Scenario, CommentStep(fmt.Sprintf("not converted: element %d", i), "second line"))
		case i%50 == 0:
			wl.Scenario = append(wl.Scenario, Step{Transaction: &Group{Name: fmt.Sprintf("page %d", i), Steps: []Step{{Request: r}, {Think: &Think{Fixed: time.Second}}}}})
			continue
		}
		wl.Scenario = append(wl.Scenario, Step{Request: r})
	}
	p.Vars = []KV{{"x", "1"}}
	p.Workloads = []*Workload{wl}
	var whole, chunked bytes.Buffer
	if _, err := p.writeTo(&whole, 1<<30); err != nil {
		t.Fatal(err)
	}
	for _, c := range []int{1, 7, 256} {
		chunked.Reset()
		if _, err := p.writeTo(&chunked, c); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(whole.Bytes(), chunked.Bytes()) {
			a, b := whole.String(), chunked.String()
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Fatalf("chunk %d: text differs at byte %d:\nwhole:   %q\nchunked: %q", c, i, a[max(0, i-80):min(len(a), i+80)], b[max(0, i-80):min(len(b), i+80)])
		}
	}
	pl, err := plan.Parse("long.yaml", chunked.Bytes(), t.TempDir(), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pl.Workloads[0].Scenario); n != 1000 {
		t.Errorf("%d steps loaded, want 1000", n)
	}
}
