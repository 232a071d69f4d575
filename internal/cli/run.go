package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newRunCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "run",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("run: not built yet")
		},
	}
}
