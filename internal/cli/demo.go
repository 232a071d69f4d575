package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newDemoCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("demo: not built yet")
		},
	}
}
