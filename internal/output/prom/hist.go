package prom

import (
	"math"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// nativeSchema 3 gives buckets 2^(1/8) ≈ 1.09 wide, the finest that a
// bucket factor of 1.1 asks for.
const nativeSchema = 3

// durations is the request-duration histogram: classic buckets and native
// (sparse, exponential) buckets in one metric, as client_golang's histogram
// with both configured exposes them. It is fed whole HDR buckets — a count
// per bucket — instead of one Observe per sample, which at thousands of
// requests per second was most of the exporter's cost.
type durations struct {
	desc *prometheus.Desc
	mu   sync.Mutex
	m    map[[2]string]*histState
}

type histState struct {
	lv      [2]string
	count   uint64
	sum     float64
	classic []uint64 // per DurationBuckets bound, not cumulative; the last is +Inf
	native  map[int]int64
}

func newDurations(desc *prometheus.Desc) *durations {
	return &durations{desc: desc, m: map[[2]string]*histState{}}
}

// add records the populated buckets of one second: each bucket's samples at
// its lowest equivalent value (µs), like the report's percentiles.
func (d *durations) add(workload, label string, h *metrics.Sparse) {
	d.mu.Lock()
	defer d.mu.Unlock()
	k := [2]string{workload, label}
	st := d.m[k]
	if st == nil {
		st = &histState{lv: k, classic: make([]uint64, len(DurationBuckets)+1), native: map[int]int64{}}
		d.m[k] = st
	}
	for i, us := range h.Values {
		n := h.Counts[i]
		v := float64(us) / 1e6
		st.count += uint64(n)
		st.sum += v * float64(n)
		b, _ := slices.BinarySearch(DurationBuckets, v) // first bound ≥ v
		st.classic[b] += uint64(n)
		st.native[nativeKey(v)] += n
	}
}

// nativeKey is the native bucket of v > 0: (2^((k-1)/8), 2^(k/8)].
func nativeKey(v float64) int {
	return int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
}

func (d *durations) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

func (d *durations) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, st := range d.m {
		ch <- d.metric(st)
	}
}

type histMetric struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (h histMetric) Desc() *prometheus.Desc    { return h.desc }
func (h histMetric) Write(m *dto.Metric) error { proto.Merge(m, h.m); return nil }

func (d *durations) metric(st *histState) prometheus.Metric {
	hist := &dto.Histogram{SampleCount: proto.Uint64(st.count), SampleSum: proto.Float64(st.sum),
		Schema: proto.Int32(nativeSchema), ZeroThreshold: proto.Float64(prometheus.DefNativeHistogramZeroThreshold),
		ZeroCount: proto.Uint64(0)}
	var cum uint64
	for i, ub := range DurationBuckets {
		cum += st.classic[i]
		hist.Bucket = append(hist.Bucket, &dto.Bucket{UpperBound: proto.Float64(ub), CumulativeCount: proto.Uint64(cum)})
	}
	keys := make([]int, 0, len(st.native))
	for k := range st.native {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var prevKey int
	var prevCount int64
	for i, k := range keys {
		switch {
		case i == 0:
			hist.PositiveSpan = append(hist.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(int32(k)), Length: proto.Uint32(1)})
		case k == prevKey+1:
			*hist.PositiveSpan[len(hist.PositiveSpan)-1].Length++
		default:
			hist.PositiveSpan = append(hist.PositiveSpan, &dto.BucketSpan{Offset: proto.Int32(int32(k - prevKey - 1)), Length: proto.Uint32(1)})
		}
		hist.PositiveDelta = append(hist.PositiveDelta, st.native[k]-prevCount)
		prevKey, prevCount = k, st.native[k]
	}
	m := &dto.Metric{Histogram: hist, Label: prometheus.MakeLabelPairs(d.desc, st.lv[:])}
	return histMetric{desc: d.desc, m: m}
}
