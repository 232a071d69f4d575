package importertest

import (
	"os"
	"testing"
)

// MissingTool ends a test that needs a real program it could not find: it
// skips, except under CI=true, where it fails, so a CI machine without the
// tool (internal/importer/testdata/install-deps.sh installs them all) never
// passes by checking nothing.
func MissingTool(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this fails instead of skipping (run scripts/install-test-deps.sh)", why)
	}
	t.Skip(why)
}
