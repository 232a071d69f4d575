package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/export"
)

func newExportCmd(st *State) *cobra.Command {
	var format, out string
	c := &cobra.Command{
		Use:   "export RUN",
		Short: "Write a run's results as Parquet or CSV tables for analysis (DuckDB, pandas)",
		Long: `Write a run directory's results as tables: intervals (per second, workload, phase and
label: count, errors, min, max, mean, p50, p90, p95, p99 ms), load (users and dropped
iterations per second), samples (when samples.jtl was kept) and monitor readings.
The columns are documented in docs/export.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = filepath.Join(args[0], "export")
			}
			files, err := export.Run(args[0], out, export.Format(format))
			if err != nil {
				return fmt.Errorf("export: %w", err)
			}
			for _, f := range files {
				fmt.Fprintf(st.Stdout, "%-10s %9d rows  %s\n", f.Table, f.Rows, f.Path)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "parquet", "parquet or csv")
	c.Flags().StringVarP(&out, "out", "o", "", "directory to write (default RUN/export)")
	return c
}
