package dockerstats

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseSize reads a size as the docker CLI prints it: go-units' HumanSize
// with decimal units ("916B", "147kB", "4.11MB") for network and block I/O,
// and BytesSize with binary units ("5.629MiB", "1.952GiB") for memory. A
// unit with "i" is a power of 1024, any other a power of 1000; case is
// ignored, since older CLIs printed "KB".
func parseSize(s string) (float64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-')) {
		i++
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("size %q is not a number with a unit", s)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	mult := 1.0
	switch unit {
	case "", "b":
	case "kb", "k":
		mult = 1e3
	case "mb", "m":
		mult = 1e6
	case "gb", "g":
		mult = 1e9
	case "tb", "t":
		mult = 1e12
	case "pb", "p":
		mult = 1e15
	case "eb":
		mult = 1e18
	case "kib":
		mult = 1 << 10
	case "mib":
		mult = 1 << 20
	case "gib":
		mult = 1 << 30
	case "tib":
		mult = 1 << 40
	case "pib":
		mult = 1 << 50
	case "eib":
		mult = 1 << 60
	default:
		return 0, fmt.Errorf("size %q has an unknown unit %q", s, unit)
	}
	return v * mult, nil
}

// parsePair reads "A / B" (MEM USAGE / LIMIT, NET I/O, BLOCK I/O).
func parsePair(s string) (float64, float64, error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not two sizes separated by /", s)
	}
	x, err := parseSize(a)
	if err != nil {
		return 0, 0, err
	}
	y, err := parseSize(b)
	if err != nil {
		return 0, 0, err
	}
	return x, y, nil
}

// parsePercent reads "0.28%".
func parsePercent(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a percentage", s)
	}
	return v, nil
}

// fmtBytes renders a byte count for notes, in binary units like the
// docker CLI's memory column.
func fmtBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	i := 0
	for math.Abs(v) >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + " " + units[i]
}

// fmtDecimal renders a byte count in decimal units, like the docker CLI's
// network and block I/O columns.
func fmtDecimal(v float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	}
	return strconv.FormatFloat(v, 'f', 3, 64) + " " + units[i]
}
