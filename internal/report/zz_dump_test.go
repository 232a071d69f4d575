package report_test
import ("os";"testing";"path/filepath"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest")
func TestDumpDA(t *testing.T){
	dir := "/tmp/h32da"; os.RemoveAll(dir)
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true}); err != nil { t.Fatal(err) }
	if _, err := report.Write(dir, report.Options{Lang: os.Getenv("L"), Formats: []string{"json","html","md"}}); err != nil { t.Fatal(err) }
	_ = filepath.Join
}
