// Package protofile compiles the .proto files a plan's grpc steps name, at
// plan load, so that a syntax error, an unknown import or a method that
// does not exist is reported as file:line:column before any traffic is
// sent. Parsing and linking are github.com/bufbuild/protocompile's (the
// compiler behind buf); this package adds the plan's conventions: paths
// relative to the plan file, every error with its position, and method
// lookup by "package.Service/Method".
package protofile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/linker"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Error is one problem in a .proto file: File is the path as resolved
// (import path joined with the file's name), Line and Col are 1-based
// (0 when the problem has no position, such as a missing file).
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// Errors lists every problem of one compilation.
type Errors []Error

func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, x := range e {
		s[i] = x.Error()
	}
	return strings.Join(s, "\n")
}

// maxErrors bounds the problems reported from one compilation; a file that
// is not protobuf at all would otherwise give one per line.
const maxErrors = 20

// Set is a compiled set of .proto files (with their imports). It is
// immutable and safe for concurrent use.
type Set struct {
	files linker.Files
}

// Compile compiles files. A file's path is resolved against the first of
// importPaths that contains it; when none does (or importPaths is empty)
// its own directory is added as an import path, so a lone file with
// imports beside it needs no configuration. The well-known types
// (google/protobuf/*.proto) are always importable. On failure the error is
// an Errors value naming each problem's file, line and column.
func Compile(files, importPaths []string) (*Set, error) {
	paths := slices.Clone(importPaths)
	names := make([]string, 0, len(files))
	for _, f := range files {
		name := ""
		for _, ip := range paths {
			if rel, err := filepath.Rel(ip, f); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
				name = filepath.ToSlash(rel)
				break
			}
		}
		if name == "" {
			paths = append(paths, filepath.Dir(f))
			name = filepath.Base(f)
		}
		names = append(names, name)
	}
	var errs Errors
	where := func(name string) string {
		for _, ip := range paths {
			p := filepath.Join(ip, filepath.FromSlash(name))
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		return name
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}),
		Reporter: reporter.NewReporter(func(e reporter.ErrorWithPos) error {
			if len(errs) < maxErrors {
				p := e.GetPosition()
				errs = append(errs, Error{File: where(p.Filename), Line: p.Line, Col: p.Col, Msg: e.Unwrap().Error()})
			}
			return nil // go on: report every problem
		}, nil),
	}
	out, err := c.Compile(context.Background(), names...)
	if len(errs) > 0 {
		return nil, errs
	}
	if err != nil {
		// Not a positioned problem: a file that cannot be opened.
		file := ""
		if len(files) == 1 {
			file = files[0]
		}
		var ewp reporter.ErrorWithPos
		if errors.As(err, &ewp) {
			p := ewp.GetPosition()
			return nil, Errors{{File: where(p.Filename), Line: p.Line, Col: p.Col, Msg: ewp.Unwrap().Error()}}
		}
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, Errors{{File: file, Msg: "cannot read: " + pe.Err.Error()}}
		}
		return nil, Errors{{File: file, Msg: err.Error()}}
	}
	return &Set{files: out}, nil
}

// Files returns the compiled files, in the order given to Compile.
func (s *Set) Files() []protoreflect.FileDescriptor {
	out := make([]protoreflect.FileDescriptor, len(s.files))
	for i, f := range s.files {
		out[i] = f
	}
	return out
}

// Method finds a method by its full name, "package.Service/Method" (as
// in a gRPC path, with or without the leading /) or
// "package.Service.Method", in the compiled files and their imports.
func (s *Set) Method(name string) (protoreflect.MethodDescriptor, error) {
	svc, meth, err := SplitMethod(name)
	if err != nil {
		return nil, err
	}
	d, _ := s.files.AsResolver().FindDescriptorByName(protoreflect.FullName(svc))
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		var services []string
		for _, f := range s.files {
			for i := 0; i < f.Services().Len(); i++ {
				services = append(services, string(f.Services().Get(i).FullName()))
			}
		}
		if len(services) == 0 {
			return nil, fmt.Errorf("no service %s: the files define no service", svc)
		}
		return nil, fmt.Errorf("no service %s (services: %s)", svc, strings.Join(services, ", "))
	}
	md := sd.Methods().ByName(protoreflect.Name(meth))
	if md == nil {
		var ms []string
		for i := 0; i < sd.Methods().Len(); i++ {
			ms = append(ms, string(sd.Methods().Get(i).Name()))
		}
		return nil, fmt.Errorf("service %s has no method %s (methods: %s)", svc, meth, strings.Join(ms, ", "))
	}
	return md, nil
}

// SplitMethod splits "package.Service/Method", "/package.Service/Method"
// or "package.Service.Method" into the service's full name and the
// method's name.
func SplitMethod(name string) (service, method string, err error) {
	n := strings.TrimPrefix(strings.TrimSpace(name), "/")
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		service, method = n[:i], n[i+1:]
	} else if i := strings.LastIndexByte(n, '.'); i >= 0 {
		service, method = n[:i], n[i+1:]
	}
	if service == "" || method == "" || !protoreflect.FullName(service).IsValid() || !protoreflect.Name(method).IsValid() {
		return "", "", fmt.Errorf("method %q is not package.Service/Method", name)
	}
	return service, method, nil
}
