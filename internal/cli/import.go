package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newImportCmd(st *State) *cobra.Command {
	return &cobra.Command{
		Use:   "import",
		Short: "(not built yet)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("import: not built yet")
		},
	}
}
