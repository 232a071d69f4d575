package postman

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert/converttest"
)

// TestFormDataAndFileBodies: a form-data body (a text field from a
// variable, a file part with its content type, a disabled part) and a file
// body are sent on the wire as Postman sends them: the server reads the
// field's value, the file's bytes under its field and base name with its
// content type, and the raw file as the body. Relative paths resolve from
// the collection's folder (newman's working directory), and the plan
// finds them wherever it is written.
func TestFormDataAndFileBodies(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "files", "cat.jpg"), []byte("JPEG-bytes-42"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "body.bin"), []byte("raw body 7"), 0o644); err != nil {
		t.Fatal(err)
	}
	col, err := Parse(strings.NewReader(`{"info":{"name":"up","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"variable":[{"key":"base","value":"http://127.0.0.1:1"},{"key":"album","value":"holiday"}],
"item":[
 {"name":"upload","request":{"method":"POST","url":"{{base}}/upload","body":{"mode":"formdata","formdata":[
   {"key":"title","value":"{{album}} 2026","type":"text"},
   {"key":"image","type":"file","src":"files/cat.jpg","contentType":"image/jpeg"},
   {"key":"skip","value":"no","type":"text","disabled":true}]}}},
 {"name":"raw","request":{"method":"PUT","url":"{{base}}/raw","header":[{"key":"Content-Type","value":"application/octet-stream"}],
   "body":{"mode":"file","file":{"src":"body.bin"}}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: filepath.Join(src, "up.postman_collection.json")})
	if c := rep.Count(); c.Converted != c.Enabled {
		t.Errorf("counts %+v: every element should convert", c)
	}

	var mu sync.Mutex
	var got []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var line string
		if r.URL.Path == "/upload" {
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				line = "upload: " + err.Error()
			} else {
				f, h, err := r.FormFile("image")
				if err != nil {
					line = "upload: " + err.Error()
				} else {
					b, _ := io.ReadAll(f)
					f.Close()
					line = fmt.Sprintf("upload title=%q skip=%q image=%s %s %q", r.FormValue("title"), r.FormValue("skip"), h.Filename, h.Header.Get("Content-Type"), b)
				}
			}
		} else {
			b, _ := io.ReadAll(r.Body)
			line = fmt.Sprintf("%s %s %s %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), b)
		}
		mu.Lock()
		got = append(got, line)
		mu.Unlock()
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	// The plan is written elsewhere than the collection.
	pf, text := converttest.Write(t, t.TempDir(), p, rep)
	d, _ := converttest.Run(t, pf, nil, 30*time.Second, "target=http://"+ln.Addr().String(), "vars.base=http://"+ln.Addr().String())
	if d.Total.Errors != 0 {
		t.Errorf("%d errors", d.Total.Errors)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		`upload title="holiday 2026" skip="" image=cat.jpg image/jpeg "JPEG-bytes-42"`,
		`PUT /raw application/octet-stream "raw body 7"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server saw\n%s\nwant\n%s\nplan:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), text)
	}
}
