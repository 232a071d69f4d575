package jtl

import (
	"bytes"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// FuzzCSV decodes arbitrary chunks with the default JMeter layout: never a
// panic, and every line is either a record, skipped or counted malformed.
func FuzzCSV(f *testing.F) {
	f.Add([]byte("1795307669713,147,GET /cart,200,OK,users 1-2,text,true,,139,117,2,2,http://x/cart,131,0,73\n"))
	f.Add([]byte("1795307669679,162,checkout,200,\"Number of samples in transaction : 2, number of failing samples : 0\",users 1-2,,true,,278,317,2,2,null,146,43,84\n"))
	f.Add([]byte("1,2,\"a\"\"b\nc\",500,x,t,text,false,\"boom\",1,1,1,1,u,1,0,0\r\n\"unterminated"))
	header := []byte("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect")
	l, _ := parseHeader(header, ',')
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, _ := importer.NewTimeParser("ms", importer.Clock{})
		d := &csvDecoder{l: l, labels: importer.NewLabels().NewCache(), tp: tp, cfg: &Config{}}
		b := &batch{}
		d.decode(&importer.Chunk{Data: data, Line: 1, Seq: 1}, false, b)
		for _, r := range b.recs {
			if r.Elapsed < 0 {
				t.Fatalf("negative elapsed accepted: %+v", r)
			}
		}
		_, _ = detectDelimiter(data)
	})
}

// FuzzDecodePaths holds the fast path (lines known to have no quote split
// eight bytes at a time) to the quoted-record splitter on every line: the
// same records and the same malformed lines, whatever the chunk.
func FuzzDecodePaths(f *testing.F) {
	f.Add([]byte("1795307669713,147,GET /cart,200,OK,users 1-2,text,true,,139,117,2,2,http://x/cart,131,0,73\n"), false)
	f.Add([]byte("1,2,a,200,OK,t,text,true,,1,1,1,1,u,1,0,0\n1,2,\"a\"\"b\nc\",500,x,t,text,false,\"boom\",1,1,1,1,u,1,0,0\r\n3,4,b,200,OK,t,text,true,,1,1,1,1,u,1,0,0\n\"unterminated"), true)
	f.Add([]byte("1,2,a,200,OK,t,text,true,,1,1,1,1,u\"v,1,0,0\n5,6,c,404,Not Found,t,text,false,,1,1,1,1,u,1,0,0"), false)
	header := []byte("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect")
	l, _ := parseHeader(header, ',')
	f.Fuzz(func(t *testing.T, data []byte, keep bool) {
		decode := func(slow bool) *batch {
			tp, _ := importer.NewTimeParser("ms", importer.Clock{})
			d := &csvDecoder{l: l, labels: importer.NewLabels().NewCache(), tp: tp, cfg: &Config{}, keep: keep, slow: slow}
			b := &batch{}
			d.decode(&importer.Chunk{Data: data, Line: 1, Seq: 1}, false, b)
			return b
		}
		fast, ref := decode(false), decode(true)
		if len(fast.recs) != len(ref.recs) {
			t.Fatalf("%d records, the reference %d", len(fast.recs), len(ref.recs))
		}
		for i := range ref.recs {
			if fast.recs[i] != ref.recs[i] {
				t.Fatalf("record %d: %+v, the reference %+v", i, fast.recs[i], ref.recs[i])
			}
		}
		if fast.probs.Count != ref.probs.Count || fast.empty != ref.empty || fast.headers != ref.headers {
			t.Fatalf("%d malformed, %d empty, %d headers; the reference %d, %d, %d",
				fast.probs.Count, fast.empty, fast.headers, ref.probs.Count, ref.empty, ref.headers)
		}
		for i := range ref.probs.First {
			if fast.probs.First[i] != ref.probs.First[i] {
				t.Fatalf("malformed line %d: %+v, the reference %+v", i, fast.probs.First[i], ref.probs.First[i])
			}
		}
	})
}

// FuzzSplit checks the eight-bytes-at-a-time field splitter against
// bytes.Split for any line and delimiter.
func FuzzSplit(f *testing.F) {
	f.Add([]byte("1795307669713,147,GET /cart,200,OK,users 1-2,text,true,,139,117,2,2,http://x/cart,131,0,73"), byte(','))
	f.Add([]byte("a;b;;c\"d;"), byte(';'))
	f.Add([]byte(",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,"), byte(','))
	for _, n := range []int{7, 8, 63, 64, 65, 511, 512, 513, 2000} { // around the mask words and the mask's end
		line := bytes.Repeat([]byte("ab,c;"), n/5+1)[:n]
		f.Add(line, byte(','))
		f.Add(append(bytes.Repeat([]byte{','}, n-1), '"'), byte(','))
	}
	f.Fuzz(func(t *testing.T, line []byte, delim byte) {
		if delim == '"' || bytes.IndexByte(line, '\n') >= 0 {
			return
		}
		d := &csvDecoder{l: layout{delim: delim}}
		ref := bytes.Split(line, []byte{delim})
		quoted := bytes.IndexByte(line, '"') >= 0
		for _, need := range []int{1, 2, 5, 17, len(d.fa)} {
			fs, nf, ok := d.splitN(line, need)
			if ok == quoted {
				t.Fatalf("need %d: ok %v with quote %v", need, ok, quoted)
			}
			if !ok {
				continue
			}
			if nf != len(ref) || len(fs) != min(need, nf) {
				t.Fatalf("need %d: %d fields (%d returned), want %d", need, nf, len(fs), len(ref))
			}
			for i := range fs {
				if !bytes.Equal(fs[i], ref[i]) {
					t.Fatalf("need %d: field %d %q, want %q", need, i, fs[i], ref[i])
				}
			}
		}
		if fs, _, ok := d.split(line); ok {
			if len(fs) != len(ref) {
				t.Fatalf("split: %d fields, want %d", len(fs), len(ref))
			}
			for i := range ref {
				if !bytes.Equal(fs[i], ref[i]) {
					t.Fatalf("split: field %d %q, want %q", i, fs[i], ref[i])
				}
			}
		}
	})
}
