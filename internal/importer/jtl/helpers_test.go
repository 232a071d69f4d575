package jtl

import (
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

func parseMilli(layout, s string, c importer.Clock) (int64, error) {
	t, err := time.ParseInLocation(layout, s, c.Loc)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}
