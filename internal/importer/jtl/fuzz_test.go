package jtl

import (
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
