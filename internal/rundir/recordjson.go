package rundir

import (
	"slices"
	"strconv"

	"github.com/plateau-perf/plateau/internal/jsonesc"
)

// AppendJSON appends r as encoding/json encodes it (json.Marshal, the same
// bytes: field order, omitempty, HTML-safe escaping, sorted map keys),
// without reflection: an import writes one record per label and second,
// and reflection was 5 % of a 1M-row import's CPU. The struct's tags stay
// the one description of the format: TestAppendJSONIsMarshal and
// FuzzAppendJSON hold this to json.Marshal.
func (r *IntervalRecord) AppendJSON(b []byte) []byte {
	b = append(b, `{"t":`...)
	b = strconv.AppendInt(b, r.T, 10)
	if r.Workload != "" {
		b = appendJSONString(append(b, `,"w":`...), r.Workload)
	}
	b = strconv.AppendInt(append(b, `,"ph":`...), int64(r.Phase), 10)
	if r.Label != "" {
		b = appendJSONString(append(b, `,"label":`...), r.Label)
	}
	if r.Tx {
		b = append(b, `,"tx":true`...)
	}
	if r.Derived {
		b = append(b, `,"dv":true`...)
	}
	b = appendJSONInt(b, `,"n":`, r.Count)
	b = appendJSONInt(b, `,"err":`, r.Errors)
	b = appendJSONInt(b, `,"sum_us":`, r.SumUs)
	b = appendJSONInt(b, `,"min_us":`, r.MinUs)
	b = appendJSONInt(b, `,"max_us":`, r.MaxUs)
	b = appendJSONInt(b, `,"svc_us":`, r.SvcUs)
	b = appendJSONInt(b, `,"sent":`, r.Sent)
	b = appendJSONInt(b, `,"recv":`, r.Recv)
	if len(r.Errs) > 0 {
		b = append(b, `,"errs":[`...)
		for i := range r.Errs {
			e := &r.Errs[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(append(b, `{"class":`...), e.Class)
			b = appendJSONInt(b, `,"status":`, int64(e.Status))
			if e.Message != "" {
				b = appendJSONString(append(b, `,"msg":`...), e.Message)
			}
			b = strconv.AppendInt(append(b, `,"n":`...), e.Count, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if r.Hist != "" {
		b = appendJSONString(append(b, `,"hist":`...), r.Hist)
	}
	if len(r.Users) > 0 {
		b = appendJSONMap(append(b, `,"users":`...), r.Users)
	}
	if len(r.Dropped) > 0 {
		b = appendJSONMap(append(b, `,"dropped":`...), r.Dropped)
	}
	return append(b, '}')
}

// appendJSONInt appends key and v unless v is 0 (omitempty).
func appendJSONInt(b []byte, key string, v int64) []byte {
	if v == 0 {
		return b
	}
	return strconv.AppendInt(append(b, key...), v, 10)
}

func appendJSONMap[V int | int64](b []byte, m map[string]V) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(appendJSONString(b, k), ':'), int64(m[k]), 10)
	}
	return append(b, '}')
}

// appendJSONString quotes s as json.Marshal does (HTML escaping on).
func appendJSONString(b []byte, s string) []byte {
	return append(jsonesc.Append(append(b, '"'), s, true), '"')
}
