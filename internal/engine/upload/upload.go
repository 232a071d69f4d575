// Package upload makes request bodies that are streamed from disk while
// they are sent — a file (body_file) or a multipart/form-data form with
// fields and files — so that an upload test holds no file in memory per
// user. Both implement httpc.Stream: an exact size first (the
// Content-Length), then the bytes.
package upload

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
)

// File is a body read from a file at each send.
type File struct{ Path string }

// Size is the file's current size.
func (f File) Size() (int64, error) {
	fi, err := os.Stat(f.Path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// WriteTo copies the file to w.
func (f File) WriteTo(w io.Writer) (int64, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	return io.Copy(w, fh)
}

// Field is a form field of a multipart body.
type Field struct{ Name, Value string }

// Part is a file part of a multipart body.
type Part struct {
	Field, Path, ContentType, FileName string
}

// Multipart is a multipart/form-data body: fields first, then files, or
// the parts in Order: each entry a field's index, or len(Fields) plus a
// file's index.
type Multipart struct {
	Boundary string
	Fields   []Field
	Files    []Part
	Order    []int
}

// NewBoundary returns a random boundary.
func NewBoundary() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "plateau" + hex.EncodeToString(b[:])
}

// ContentType is the Content-Type header of the body.
func (m *Multipart) ContentType() string {
	return "multipart/form-data; boundary=" + m.Boundary
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "%0D", "\n", "%0A")

// heads returns each part's delimiter and header block (a field's with
// its value) in the order sent, and the closing delimiter, as
// mime/multipart writes them; file[i] is the file part i sends after its
// head, or -1.
func (m *Multipart) heads() (parts []string, file []int, closing string) {
	order := m.Order
	if len(order) == 0 {
		order = make([]int, len(m.Fields)+len(m.Files))
		for i := range order {
			order[i] = i
		}
	}
	for n, k := range order {
		d := "\r\n--" + m.Boundary + "\r\n"
		if n == 0 {
			d = "--" + m.Boundary + "\r\n"
		}
		if k < len(m.Fields) {
			f := m.Fields[k]
			parts = append(parts, d+fmt.Sprintf("Content-Disposition: form-data; name=\"%s\"\r\n\r\n", quoteEscaper.Replace(f.Name))+f.Value)
			file = append(file, -1)
			continue
		}
		p := m.Files[k-len(m.Fields)]
		parts = append(parts, d+fmt.Sprintf("Content-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n",
			quoteEscaper.Replace(p.Field), quoteEscaper.Replace(p.FileName), p.ContentType))
		file = append(file, k-len(m.Fields))
	}
	closing = "\r\n--" + m.Boundary + "--\r\n"
	if len(order) == 0 {
		closing = "--" + m.Boundary + "--\r\n"
	}
	return parts, file, closing
}

// Size is the body's exact length with the files' current sizes.
func (m *Multipart) Size() (int64, error) {
	parts, file, closing := m.heads()
	n := int64(len(closing))
	for i, s := range parts {
		n += int64(len(s))
		if file[i] >= 0 {
			fi, err := os.Stat(m.Files[file[i]].Path)
			if err != nil {
				return 0, err
			}
			n += fi.Size()
		}
	}
	return n, nil
}

// WriteTo writes the body, copying each file from disk.
func (m *Multipart) WriteTo(w io.Writer) (int64, error) {
	parts, file, closing := m.heads()
	var total int64
	put := func(s string) error {
		k, err := io.WriteString(w, s)
		total += int64(k)
		return err
	}
	for i, s := range parts {
		if err := put(s); err != nil {
			return total, err
		}
		if file[i] < 0 {
			continue
		}
		k, err := File{Path: m.Files[file[i]].Path}.WriteTo(w)
		total += k
		if err != nil {
			return total, err
		}
	}
	return total, put(closing)
}
