package monitor

import (
	"fmt"
	"sort"
	"strings"
)

// ValidateTarget checks cfg without touching the system: the kind is known,
// the interval is sane, and the kind's own rules (required fields, regular
// expressions, URLs, selectors) hold. Errors name the target.
func ValidateTarget(cfg TargetConfig, kinds map[string]Kind) error {
	name := TargetName(cfg)
	k, ok := kinds[cfg.Kind]
	if !ok {
		known := make([]string, 0, len(kinds))
		for n := range kinds {
			known = append(known, n)
		}
		sort.Strings(known)
		return fmt.Errorf("monitor %q: unknown kind %q (known: %s)", name, cfg.Kind, strings.Join(known, ", "))
	}
	if cfg.Interval < 0 || (cfg.Interval > 0 && cfg.Interval < MinInterval) {
		return fmt.Errorf("monitor %q: interval %s is below the minimum %s", name, cfg.Interval, MinInterval)
	}
	if k.Validate != nil {
		if err := k.Validate(cfg); err != nil {
			return fmt.Errorf("monitor %q (%s): %w", name, cfg.Kind, err)
		}
	}
	return nil
}
