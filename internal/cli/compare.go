package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newCompareCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "compare",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("compare: not built yet")
		},
	}
}
