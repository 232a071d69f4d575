package report_test

import (
	"os"
	"testing"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

func TestZZRender(t *testing.T) {
	out := os.Getenv("I14_RENDER")
	_ = reporttest.Step{}
	if out == "" {
		t.Skip()
	}
	for name, o := range map[string]reporttest.Options{
		"concurrent": {Concurrent: true, Monitor: true},
		"stepped":    {Monitor: true},
		"allerr":     {AllErrors: true},
		"bda": {Concurrent: true, Monitor: true, Steps: []reporttest.Step{{Users: 5, Seconds: 20}, {Users: 8, Seconds: 60}, {Users: 10, Seconds: 20}}},
		"long":       {Monitor: true, LarLabel: "GET /lar/allergies/very-long-label-name-that-goes-on-and-on-for-eighty-chars-x"},
	} {
		dir := out + "/" + name
		os.RemoveAll(dir)
		if err := reporttest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Write(dir, report.Options{}); err != nil {
			t.Fatal(err)
		}
	}
}
