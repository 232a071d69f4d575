package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Uploads against a server that parses them: multipart with a field and
// a file (content type, templated file name) and body_file, over HTTP/1.1
// and HTTP/2; the server checks every byte by hash.
func TestUploadsMultipartAndBodyFile(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "photo.jpg")
	data := make([]byte, 300<<10) // larger than any connection buffer
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Proto + " " + r.URL.Path
		switch r.URL.Path {
		case "/photos":
			f, fh, err := r.FormFile("image")
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			b, _ := io.ReadAll(f)
			s := sha256.Sum256(b)
			if hex.EncodeToString(s[:]) != want || fh.Header.Get("Content-Type") != "image/jpeg" ||
				fh.Filename != "u"+r.FormValue("user")+".jpg" || r.FormValue("title") != "holiday" {
				http.Error(w, "bad upload "+fh.Filename, 400)
				return
			}
		case "/raw":
			b, _ := io.ReadAll(r.Body)
			s := sha256.Sum256(b)
			if hex.EncodeToString(s[:]) != want || r.ContentLength != int64(len(data)) {
				http.Error(w, "bad body", 400)
				return
			}
		}
		mu.Lock()
		got[key]++
		mu.Unlock()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	plan := `name: uploads
target: https://127.0.0.1:1
http: {insecure: true}
workloads:
  w:
    scenario:
      - request:
          name: photo
          method: POST
          url: /photos
          multipart:
            fields: {title: holiday, user: "${__user}"}
            files:
              - {field: image, path: ` + img + `, content_type: image/jpeg, filename: "u${__user}.jpg"}
      - request: {name: raw, method: PUT, url: /raw, body_file: ` + img + `}
      - request: {name: photo h2, method: POST, url: /photos, http_version: "2",
                  multipart: {fields: {title: holiday, user: "${__user}"},
                              files: [{field: image, path: ` + img + `, content_type: image/jpeg, filename: "u${__user}.jpg"}]}}
      - request: {name: raw h2, method: PUT, url: /raw, body_file: ` + img + `, http_version: "2"}
    load: {users: 2, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	for _, label := range []string{"photo", "raw", "photo h2", "raw h2"} {
		if n, errs := labelAgg(d, label); n != 6 || errs != 0 {
			t.Fatalf("%s: %d samples, %d errors; want 6 and 0", label, n, errs)
		}
	}
	for _, k := range []string{"HTTP/1.1 /photos", "HTTP/1.1 /raw", "HTTP/2.0 /photos", "HTTP/2.0 /raw"} {
		if got[k] != 6 {
			t.Fatalf("server accepted %v; want 6 of each of %s", got, k)
		}
	}
}

// Over plain TCP the HTTP/1.1 client writes a request's last bytes and
// waits for the response in one system call; a streamed body (multipart,
// body_file) follows the head, so the head must not wait (it did: every
// upload timed out, the server waiting for the body the client held back).
func TestUploadsOverPlainTCP(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "photo.jpg")
	data := make([]byte, 100<<10)
	for i := range data {
		data[i] = byte(i * 13)
	}
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/photos" {
			f, _, err := r.FormFile("image")
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			b, _ := io.ReadAll(f)
			if len(b) != len(data) {
				http.Error(w, "short upload", 400)
			}
			return
		}
		if b, _ := io.ReadAll(r.Body); len(b) != len(data) {
			http.Error(w, "short body", 400)
		}
	}))
	defer srv.Close()
	plan := `name: uploads
target: http://127.0.0.1:1
http: {timeout: 5s}
workloads:
  w:
    scenario:
      - request: {name: photo, method: POST, url: /photos, multipart: {files: [{field: image, path: ` + img + `}]}}
      - request: {name: raw, method: PUT, url: /raw, body_file: ` + img + `}
    load: {users: 2, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	for _, label := range []string{"photo", "raw"} {
		if n, errs := labelAgg(d, label); n != 6 || errs != 0 {
			t.Fatalf("%s: %d samples, %d errors; want 6 and 0", label, n, errs)
		}
	}
}

// A multipart body with an order sends its parts in it — a file before a
// field, two files of one name apart — with the exact Content-Length; the
// server reads the parts in turn.
func TestUploadsMultipartOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, []byte("x,y\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte("second"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var orders []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var order []string
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			c, _ := io.ReadAll(p)
			order = append(order, p.FormName()+"="+p.FileName()+":"+string(c))
		}
		mu.Lock()
		orders = append(orders, strings.Join(order, " | "))
		mu.Unlock()
	}))
	defer srv.Close()
	plan := `name: order
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - request:
          method: POST
          url: /up
          multipart:
            fields: {note: hi, tag: t1}
            files:
              - {field: doc, path: ` + a + `, content_type: text/csv}
              - {field: doc, path: ` + b + `}
            order: [doc, note, doc, tag]
    load: {users: 1, iterations: 2}
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	if n, errs := labelAgg(d, "POST /up"); n != 2 || errs != 0 {
		t.Fatalf("%d samples, %d errors; want 2 and 0", n, errs)
	}
	want := "doc=a.csv:x,y\n1,2\n | note=:hi | doc=b.txt:second | tag=:t1"
	mu.Lock()
	defer mu.Unlock()
	if len(orders) != 2 || orders[0] != want || orders[1] != want {
		t.Errorf("the server read %q, want %q twice", orders, want)
	}
}
