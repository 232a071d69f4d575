package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/datagen"
	"github.com/plateau-perf/plateau/internal/rundir"
)

func newDatagenCmd(st *State) *cobra.Command {
	var (
		out    string
		scale  float64
		seed   int64
		dryRun bool
	)
	c := &cobra.Command{
		Use:   "datagen SPEC.yaml -o DIR",
		Short: "Write test data at a modelled scale from a data spec (entities, counts, relations, distributions)",
		Long: `Write test data from a data spec: one CSV (with a header), NDJSON or JSON file per
entity, rows made per parent row from a distribution, fields from generators. The
same spec, seed and scale give the same bytes. DIR also gets datagen.json: rows,
bytes and the spread of rows per parent for each entity. See docs/datagen.md.

--dry-run prints the expected row counts without writing anything.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := datagen.LoadFile(args[0])
			if err != nil {
				var es datagen.Errors
				if errors.As(err, &es) {
					return fmt.Errorf("the data spec has %d problem(s):\n%w", len(es), err)
				}
				return err
			}
			opt := datagen.Options{Dir: out}
			if cmd.Flags().Changed("scale") {
				if scale <= 0 {
					return fmt.Errorf("--scale %v: want a positive factor", scale)
				}
				opt.Scale = scale
			}
			if cmd.Flags().Changed("seed") {
				if seed < 0 {
					return fmt.Errorf("--seed %d: want a number ≥ 0", seed)
				}
				u := uint64(seed)
				opt.Seed = &u
			}
			if dryRun {
				return printExpected(st, s, opt)
			}
			if out == "" {
				return errors.New("-o DIR is required (the directory to write the data into)")
			}
			res, err := datagen.Generate(cmd.Context(), s, opt)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(st.Stdout, 2, 8, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(tw, "entity\tfile\trows\texpected\tper parent (mean, min–max)\tbytes\t\n")
			for _, e := range res.Entities {
				pp := "–"
				if e.PerParent != nil {
					pp = fmt.Sprintf("%.2f, %d–%d", e.PerParent.Mean, e.PerParent.Min, e.PerParent.Max)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%d\t\n", e.Name, filepath.Join(out, e.File), e.Rows, e.Expected, pp, e.Bytes)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if _, err := fmt.Fprintf(st.Stdout, "%d rows, %d bytes in %.2f s (seed %d, scale %g) → %s\n",
				res.Rows, res.Bytes, res.DurationS, res.Seed, res.Scale, filepath.Join(out, datagen.ManifestFile)); err != nil {
				return err
			}
			// Run by a prepare command: the run's report states the data
			// volume from a copy of the manifest in the run directory.
			if runDir, ok := st.Getenv("PLATEAU_RUN_DIR"); ok && runDir != "" {
				return keepManifest(runDir, args[0], out)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "directory to write the data files into (created if missing)")
	c.Flags().Float64Var(&scale, "scale", 1, "multiply the root entities' counts (default: the spec's scale)")
	c.Flags().Int64Var(&seed, "seed", 0, "random seed (default: the spec's seed)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the expected row counts and write nothing")
	return c
}

// printExpected prints the model's expected rows per entity.
func printExpected(st *State, s *datagen.Spec, opt datagen.Options) error {
	scale := s.Scale
	if opt.Scale > 0 {
		scale = opt.Scale
	}
	sc := *s
	sc.Scale = scale
	tw := tabwriter.NewWriter(st.Stdout, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "entity\tparent\texpected rows\t\n")
	total := 0.0
	for _, e := range s.Entities {
		n := sc.Expected(e)
		total += n
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t\n", e.Name, e.Parent, n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(st.Stdout, "about %.0f rows at scale %g\n", total, scale)
	return err
}

// maxGeneratedRows bounds the rows a generate: feeder makes in memory
// (every entity of its spec counts: the feeder's rows are those plateau
// datagen writes, so the whole spec is made).
const maxGeneratedRows = 10_000_000

// generateFeeder makes a plan's generate: feeder: one entity of a datagen
// spec, in memory (plan.Options.Generate).
func generateFeeder(path, entity string, scale float64, seed *uint64) ([]string, [][]string, error) {
	s, err := datagen.LoadFile(path)
	if err != nil {
		return nil, nil, err
	}
	cols, rows, err := datagen.Table(context.Background(), s, entity,
		datagen.Options{Scale: scale, Seed: seed, MaxRows: maxGeneratedRows})
	if errors.Is(err, datagen.ErrTooManyRows) {
		err = fmt.Errorf("%w: for data this large run plateau datagen in a prepare: command and read its file", err)
	}
	return cols, rows, err
}

// keepManifest copies dir's datagen.json into the run directory's datagen/
// folder, named after the spec (spec.json, spec-2.json, …).
func keepManifest(runDir, spec, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, datagen.ManifestFile))
	if err != nil {
		return err
	}
	to := filepath.Join(runDir, rundir.DatagenDir)
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	base := strings.TrimSuffix(filepath.Base(spec), filepath.Ext(spec))
	name := filepath.Join(to, base+".json")
	for i := 2; ; i++ {
		if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = filepath.Join(to, fmt.Sprintf("%s-%d.json", base, i))
	}
	return os.WriteFile(name, b, 0o644)
}
