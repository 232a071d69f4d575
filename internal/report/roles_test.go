package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestGeneratorJudgedApart: a host monitored as the load generator (role
// generator) is not the system under test: the CPU conclusion names the
// services' hosts, the generator's health has its own line, and with the
// test on loopback its interface figures are not called the test's
// network traffic.
func TestGeneratorJudgedApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true}); err != nil {
		t.Fatal(err)
	}
	ev := filepath.Join(dir, mondata.SubDir, mondata.EventsFile)
	b, err := os.ReadFile(ev)
	if err != nil {
		t.Fatal(err)
	}
	marked := strings.ReplaceAll(string(b), `"target":"docker01"`, `"target":"docker01","role":"generator"`)
	if marked == string(b) {
		t.Fatal("no docker01 events to mark")
	}
	if err := os.WriteFile(ev, []byte(marked), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := Generate(dir, Options{Now: fixedNow, Formats: []string{"json", "md"}})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	var cpu, gen, network string
	for _, line := range strings.Split(string(md), "\n") {
		switch {
		case strings.Contains(line, "**CPU:**"):
			cpu = line
		case strings.Contains(line, "**Load generator:**"):
			gen = line
		case strings.Contains(line, "**Network:**"):
			network = line
		}
	}
	if cpu == "" || strings.Contains(cpu, "docker01") || !strings.Contains(cpu, "docker02") {
		t.Errorf("CPU conclusion should judge the services' host docker02, not the generator docker01: %q", cpu)
	}
	if !strings.Contains(gen, "docker01") {
		t.Errorf("the generator's health is not its own line: %q", gen)
	}
	if strings.Contains(network, "docker01") {
		t.Errorf("the generator's interfaces counted as the test's traffic over loopback: %q", network)
	}
	roles := map[string]mondata.Role{}
	for _, m := range sum.Monitors {
		roles[m.Name] = m.Role
	}
	if roles["docker01"] != mondata.RoleGenerator || roles["docker02"] != mondata.RoleUnknown {
		t.Errorf("summary.json monitors' roles: %v", roles)
	}
}
