package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newReportCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "report",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("report: not built yet")
		},
	}
}
