package har

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeHAR writes a recording of n entries shaped like a browser's: a
// login returning a token, then API calls sending it back, each with a
// browser's headers and a JSON response of about 2 KB.
func writeHAR(w io.Writer, n, itemsPerBody int) error {
	bw := bufio.NewWriter(w)
	fmt.Fprint(bw, `{"log":{"version":"1.2","creator":{"name":"gen","version":"1"},"pages":[{"id":"p1","title":"App"}],"entries":[`)
	item := strings.Repeat(`{"id":12345,"name":"a product with a name","price":12.5,"tags":["x","y","z"]},`, itemsPerBody)
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	hdrs := `{"name":"Accept","value":"application/json"},{"name":"User-Agent","value":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36"},{"name":"Accept-Language","value":"en-GB,en;q=0.9"},{"name":"Referer","value":"http://shop.test/app"}`
	for i := 0; i < n; i++ {
		if i > 0 {
			bw.WriteString(",\n")
		}
		st := t0.Add(time.Duration(i) * 50 * time.Millisecond).Format(time.RFC3339Nano)
		if i == 0 {
			fmt.Fprintf(bw, `{"pageref":"p1","startedDateTime":%q,"time":20,"request":{"method":"POST","url":"http://shop.test/login","headers":[%s,{"name":"Content-Type","value":"application/json"}],"postData":{"mimeType":"application/json","text":"{\"user\":\"bob\"}"}},"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"content":{"mimeType":"application/json","text":"{\"token\":\"tok-9f8e7d6c5b4a\"}"}}}`, st, hdrs)
			continue
		}
		fmt.Fprintf(bw, `{"pageref":"p1","startedDateTime":%q,"time":20,"request":{"method":"GET","url":"http://shop.test/api/items/%d?page=%d","headers":[%s,{"name":"Authorization","value":"Bearer tok-9f8e7d6c5b4a"}]},"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"},{"name":"Cache-Control","value":"no-store"},{"name":"Date","value":"Thu, 01 Jan 2026 10:00:00 GMT"}],"content":{"mimeType":"application/json","text":%q}}}`,
			st, i, i%7, hdrs, `{"items":[`+item+`{"id":`+fmt.Sprint(i)+`}]}`)
	}
	bw.WriteString("]}}\n")
	return bw.Flush()
}

// peakHeap runs fn while sampling the heap in use every millisecond and
// returns the highest sample above the heap before fn.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

func harFile(tb testing.TB, n, itemsPerBody int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "big.har")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := writeHAR(f, n, itemsPerBody); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkConvertFileMemory converts a 20,000-entry recording (≈ 50 MB)
// streamed from its file and reports the peak heap per entry; the
// in-memory path (Parse, then Convert) beside it is how convert har read
// a HAR before.
func BenchmarkConvertFileMemory(b *testing.B) {
	const n = 20000
	path := harFile(b, n, 24)
	st, _ := os.Stat(path)
	b.Run("stream", func(b *testing.B) {
		var peak uint64
		for range b.N {
			peak = max(peak, peakHeap(func() {
				if _, _, err := ConvertFile(path, Options{Source: "big.har"}); err != nil {
					b.Fatal(err)
				}
			}))
		}
		b.ReportMetric(float64(peak)/n, "peak-heap-B/entry")
		b.ReportMetric(float64(st.Size())/n, "file-B/entry")
	})
	b.Run("in-memory", func(b *testing.B) {
		var peak uint64
		for range b.N {
			peak = max(peak, peakHeap(func() {
				data, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				h, err := Parse(strings.NewReader(string(data)))
				if err != nil {
					b.Fatal(err)
				}
				Convert(h, Options{Source: "big.har"})
			}))
		}
		b.ReportMetric(float64(peak)/n, "peak-heap-B/entry")
	})
}

// TestConvertFileBounded: the streamed conversion holds the output, not
// the recording. The same 3,000 requests recorded with 2 KB and with 16 KB
// response bodies (6 and 45 MB files) convert with peak heaps within a few
// MB of each other (the correlation window, 1 MiB here, and one entry),
// where reading the file into memory costs the difference in full. This
// counts what the code holds (sampled heap), not time.
func TestConvertFileBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB of recordings")
	}
	opt := Options{Source: "big.har", CorrelationBudget: 1 << 20}
	peak := func(items int) (uint64, int64) {
		path := harFile(t, 3000, items)
		st, _ := os.Stat(path)
		var err error
		p := peakHeap(func() { _, _, err = ConvertFile(path, opt) })
		if err != nil {
			t.Fatal(err)
		}
		return p, st.Size()
	}
	small, smallSize := peak(24)
	large, largeSize := peak(200)
	t.Logf("%d B file: peak %d B; %d B file: peak %d B", smallSize, small, largeSize, large)
	if d := int64(large) - int64(small); d > 8<<20 {
		t.Errorf("bodies %d B larger in total cost %d B more heap: the recording is held", largeSize-smallSize, d)
	}
}
