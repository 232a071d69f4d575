package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/datagen"
)

// plateau datagen writes the example spec's files and datagen.json;
// --dry-run writes nothing; a bad spec exits 2 naming file and line.
func TestDatagenCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := runCLI(t, "datagen", "../../examples/school-data/school.yaml", "-o", out, "--scale", "0.005")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res datagen.Result
	b, err := os.ReadFile(filepath.Join(out, datagen.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Entities) != 5 || res.Scale != 0.005 || res.Seed != 2013 {
		t.Fatalf("manifest %+v", res)
	}
	for _, e := range res.Entities {
		fi, err := os.Stat(filepath.Join(out, e.File))
		if err != nil || fi.Size() != e.Bytes {
			t.Errorf("%s: %v, size vs manifest %d", e.File, err, e.Bytes)
		}
		if !strings.Contains(stdout, e.Name) {
			t.Errorf("stdout does not list %s:\n%s", e.Name, stdout)
		}
	}

	dry := filepath.Join(t.TempDir(), "none")
	code, stdout, _ = runCLI(t, "datagen", "../../examples/school-data/school.yaml", "-o", dry, "--dry-run")
	if code != ExitOK || !strings.Contains(stdout, "8748000") {
		t.Errorf("dry run: exit %d, want 8,748,000 expected responses at scale 1:\n%s", code, stdout)
	}
	if _, err := os.Stat(dry); err == nil {
		t.Error("--dry-run wrote the output directory")
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("entities:\n  a:\n    count: 3\n    fields: {id: sequence}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "datagen", bad, "-o", t.TempDir())
	if code != ExitError || !strings.Contains(stderr, bad+":4:18: field id:") {
		t.Errorf("bad spec: exit %d\n%s", code, stderr)
	}
}
