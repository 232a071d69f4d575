// Package study002 is plateau demo 002.
package study002

import (
	"context"
	"errors"

	"github.com/plateau-perf/plateau/internal/demo/studykit"
)

// Run runs the study.
func Run(ctx context.Context, env *studykit.Env) (string, error) {
	return "", errors.New("not built yet")
}
