package har

import (
	"bytes"
	"testing"
)

// FuzzConvert: any input is rejected with an error or converted into a
// plan that can be written; never a panic.
func FuzzConvert(f *testing.F) {
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":5,"request":{"method":"POST","url":"http://h/login","headers":[{"name":"Authorization","value":"Bearer abcdefgh"}],"postData":{"mimeType":"application/json","text":"{\"u\":\"x\"}"}},"response":{"status":200,"headers":[{"name":"Set-Cookie","value":"s=1"}],"content":{"mimeType":"application/json","text":"{\"token\":\"tok-123456\",\"ids\":[1234567]}"}}},{"startedDateTime":"2026-01-01T00:00:01Z","time":5,"request":{"method":"GET","url":"http://h/a/tok-123456?id=1234567","headers":[{"name":"Cookie","value":"s=1"}]},"response":{"status":302,"headers":[],"content":{"text":"<a href=\"x?csrf=zzzz9999\">"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		p, rep := Convert(h, Options{Source: "fuzz.har"})
		if _, err := p.Bytes(); err != nil {
			t.Fatalf("writing plan: %v", err)
		}
		var b bytes.Buffer
		if _, err := rep.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
	})
}
