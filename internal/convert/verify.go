package convert

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/plan"
)

// Verify loads the written plan with plateau's plan loader and compiles it
// as the engine would — the checks of `plateau check`, which `plateau run`
// makes before sending anything — and returns the first error. Data files are the real ones when they exist in dir (the
// directory the plan is written to), otherwise stand-ins holding the columns
// the plan reads; ${env.NAME} without a default reads a placeholder, since
// secrets are deliberately left to the environment.
func Verify(p *Plan, name, dir string) (*plan.Plan, error) {
	tmp, err := os.MkdirTemp("", "plateau-convert-")
	if err != nil {
		return nil, fmt.Errorf("verifying plan: %w", err)
	}
	defer os.RemoveAll(tmp)
	cp := *p
	cp.Data = make([]Feeder, len(p.Data))
	for i, f := range p.Data {
		real := f.CSV
		ext := ".csv"
		if f.JSON != "" {
			real, ext = f.JSON, ".json"
		}
		stand := filepath.Join(tmp, fmt.Sprintf("data-%d%s", i, ext))
		if f.JSON != "" {
			f.JSON = stand
		} else {
			f.CSV = stand
		}
		cp.Data[i] = f
		b, made := p.Files[real]
		if !made {
			if !filepath.IsAbs(real) {
				real = filepath.Join(dir, real)
			}
			var err error
			b, err = os.ReadFile(real)
			made = err == nil
		}
		if made {
			if err := os.WriteFile(stand, b, 0o644); err != nil {
				return nil, fmt.Errorf("verifying plan: %w", err)
			}
			continue
		}
		if ext == ".json" {
			err = writeJSONStandIn(stand, f.Columns)
		} else {
			err = writeStandIn(stand, f.Columns, f.Delimiter)
		}
		if err != nil {
			return nil, fmt.Errorf("verifying plan: %w", err)
		}
	}
	src, err := cp.Bytes()
	if err != nil {
		return nil, err
	}
	// Secrets are left to the environment without a default: those read a
	// placeholder; every other reference keeps its default.
	noDefault := map[string]bool{}
	for _, m := range envRefRe.FindAllStringSubmatch(string(src), -1) {
		if !strings.Contains(m[1], ":-") {
			noDefault[strings.TrimSpace(m[1])] = true
		}
	}
	env := func(k string) (string, bool) {
		if noDefault[k] {
			return "placeholder", true
		}
		return "", false
	}
	// The file is read back as `plateau check` reads it (plan.LoadFile,
	// its size limit included), so the report's "passes" is true of the
	// command the user runs next.
	file := filepath.Join(tmp, "plan.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		return nil, fmt.Errorf("verifying plan: %w", err)
	}
	pl, err := plan.LoadFile(file, plan.Options{Env: env})
	if err != nil {
		return nil, errors.New(strings.ReplaceAll(err.Error(), file, name))
	}
	// What plateau check adds to the loader: the plan compiles into the
	// engine's program.
	if err := engine.Check(pl); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return pl, nil
}

var envRefRe = regexp.MustCompile(`\$\{env\.([^}]*)\}`)

func writeJSONStandIn(path string, cols []string) error {
	if len(cols) == 0 {
		cols = []string{"value"}
	}
	row := map[string]string{}
	for _, c := range cols {
		row[c] = "x"
	}
	b, err := json.Marshal([]map[string]string{row})
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func writeStandIn(path string, cols []string, delim string) error {
	if len(cols) == 0 {
		cols = []string{"value"}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if delim != "" && delim != "," {
		if d := []rune(strings.ReplaceAll(delim, `\t`, "\t")); len(d) == 1 {
			w.Comma = d[0]
		}
	}
	row := make([]string, len(cols))
	for i := range row {
		row[i] = "x"
	}
	if err := w.WriteAll([][]string{cols, row}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
