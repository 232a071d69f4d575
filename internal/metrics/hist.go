// Package metrics aggregates samples into mergeable per-interval statistics:
// exact counts, sums, minima and maxima, plus an HDR histogram of response
// times per label, per phase and per one-second interval. Histograms from
// intervals, phases and generator processes add up losslessly.
package metrics

import (
	"fmt"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry used everywhere in plateau: values in microseconds from
// 1 µs to 1 hour with 3 significant digits (0.1 % value resolution). Longer
// values are clamped to the top and still counted exactly in Agg.MaxUs.
const (
	HistLowestUs  = 1
	HistHighestUs = int64(time.Hour / time.Microsecond)
	HistDigits    = 3
)

// NewHist returns an empty histogram with plateau's geometry.
func NewHist() *hdr.Histogram { return hdr.New(HistLowestUs, HistHighestUs, HistDigits) }

// recordUs adds one value in microseconds, clamped to the geometry.
func recordUs(h *hdr.Histogram, us int64) {
	if us < HistLowestUs {
		us = HistLowestUs
	} else if us > HistHighestUs {
		us = HistHighestUs
	}
	_ = h.RecordValue(us) // cannot fail inside the clamped range
}

// EncodeHist returns the compressed base64 V2 encoding (the "HISTFAAA…" form of
// HdrHistogram interval logs, readable by the Java and Go libraries). A
// HistEncoder does the same with reused buffers.
func EncodeHist(h *hdr.Histogram) (string, error) {
	var e HistEncoder
	return e.Encode(h)
}

// DecodeHist is the inverse of EncodeHist.
func DecodeHist(s string) (*hdr.Histogram, error) {
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decoding histogram: %w", err)
	}
	return h, nil
}
