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

// Multipart is a multipart/form-data body: fields first, then files.
type Multipart struct {
	Boundary string
	Fields   []Field
	Files    []Part
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

// heads returns each part's delimiter and header block, and the closing
// delimiter, as mime/multipart writes them.
func (m *Multipart) heads() (fields []string, files []string, closing string) {
	delim := func(first bool) string {
		if first {
			return "--" + m.Boundary + "\r\n"
		}
		return "\r\n--" + m.Boundary + "\r\n"
	}
	n := 0
	for _, f := range m.Fields {
		fields = append(fields, delim(n == 0)+
			fmt.Sprintf("Content-Disposition: form-data; name=\"%s\"\r\n\r\n", quoteEscaper.Replace(f.Name))+f.Value)
		n++
	}
	for _, p := range m.Files {
		files = append(files, delim(n == 0)+
			fmt.Sprintf("Content-Disposition: form-data; name=\"%s\"; filename=\"%s\"\r\nContent-Type: %s\r\n\r\n",
				quoteEscaper.Replace(p.Field), quoteEscaper.Replace(p.FileName), p.ContentType))
		n++
	}
	closing = "\r\n--" + m.Boundary + "--\r\n"
	if n == 0 {
		closing = "--" + m.Boundary + "--\r\n"
	}
	return fields, files, closing
}

// Size is the body's exact length with the files' current sizes.
func (m *Multipart) Size() (int64, error) {
	fields, files, closing := m.heads()
	n := int64(len(closing))
	for _, s := range fields {
		n += int64(len(s))
	}
	for i, s := range files {
		fi, err := os.Stat(m.Files[i].Path)
		if err != nil {
			return 0, err
		}
		n += int64(len(s)) + fi.Size()
	}
	return n, nil
}

// WriteTo writes the body, copying each file from disk.
func (m *Multipart) WriteTo(w io.Writer) (int64, error) {
	fields, files, closing := m.heads()
	var total int64
	put := func(s string) error {
		k, err := io.WriteString(w, s)
		total += int64(k)
		return err
	}
	for _, s := range fields {
		if err := put(s); err != nil {
			return total, err
		}
	}
	for i, s := range files {
		if err := put(s); err != nil {
			return total, err
		}
		k, err := File{Path: m.Files[i].Path}.WriteTo(w)
		total += k
		if err != nil {
			return total, err
		}
	}
	return total, put(closing)
}
