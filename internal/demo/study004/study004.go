// Package study004 is plateau demo 004.
package study004

import (
	"context"
	"errors"

	"github.com/plateau-perf/plateau/internal/demo/studykit"
)

// Run runs the study.
func Run(ctx context.Context, env *studykit.Env) (string, error) {
	return "", errors.New("not built yet")
}
