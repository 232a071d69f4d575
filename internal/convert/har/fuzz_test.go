package har

import (
	"bytes"
	"os"
	"path/filepath"
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

// FuzzConvertFile: the streamed conversion never panics, and when both it
// and the in-memory one accept an input they write the same plan and
// report.
func FuzzConvertFile(f *testing.F) {
	f.Add([]byte(twoPages))
	f.Add([]byte(`{"log":{"entries":[{"startedDateTime":"2026-01-01T00:00:00Z","time":5,"request":{"method":"GET","url":"http://h/a?api_key=abcdef12"},"response":{"status":200}}],"pages":[]}}`))
	f.Add([]byte(`{"x":[1,{"y":2}],"log":{"creator":{"name":"a"},"entries":[]}}`))
	f.Add([]byte(`{"log":{"entries":[1,`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "f.har")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, rep, err := ConvertFile(path, Options{Source: "f.har"})
		if err != nil {
			return
		}
		got, err := p.Bytes()
		if err != nil {
			t.Fatalf("writing plan: %v", err)
		}
		var gr bytes.Buffer
		if _, err := rep.WriteTo(&gr); err != nil {
			t.Fatal(err)
		}
		h, err := Parse(bytes.NewReader(data))
		if err != nil {
			return // stricter (trailing data, duplicate keys)
		}
		p2, rep2 := Convert(h, Options{Source: "f.har"})
		want, _ := p2.Bytes()
		var wr bytes.Buffer
		_, _ = rep2.WriteTo(&wr)
		if !bytes.Equal(got, want) || !bytes.Equal(gr.Bytes(), wr.Bytes()) {
			t.Fatalf("streamed and in-memory conversions differ:\n%s\n---\n%s", got, want)
		}
	})
}
