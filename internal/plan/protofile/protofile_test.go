package protofile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompileAndMethod(t *testing.T) {
	t.Parallel()
	s, err := Compile([]string{echoProto}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plateau.test.Echo/Say", "/plateau.test.Echo/Say", "plateau.test.Echo.Say"} {
		md, err := s.Method(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if md.FullName() != "plateau.test.Echo.Say" || md.Input().FullName() != "plateau.test.SayRequest" || md.IsStreamingServer() {
			t.Errorf("%s: got %s(%s), streaming %v", name, md.FullName(), md.Input().FullName(), md.IsStreamingServer())
		}
	}
	md, err := s.Method("plateau.test.Echo/Count")
	if err != nil || !md.IsStreamingServer() {
		t.Fatalf("Count: %v, %v", md, err)
	}
	for name, want := range map[string]string{
		"plateau.test.Echo/Shout": "has no method Shout (methods: Say, Count, Upload)",
		"plateau.test.Echoo/Say":  "no service plateau.test.Echoo (services: plateau.test.Echo)",
		"Say":                     "is not package.Service/Method",
		"a.b/":                    "is not package.Service/Method",
	} {
		if _, err := s.Method(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", name, err, want)
		}
	}
}

// TestCompileErrors: every problem comes back with the file, line and
// column where it is.
func TestCompileErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join("testdata", "bad.proto")
	_, err := Compile([]string{bad}, nil)
	var errs Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("error %v, want Errors", err)
	}
	if e := errs[0]; e.File != bad || e.Line != 6 || e.Col != 3 || !strings.Contains(e.Msg, "syntax error") {
		t.Errorf("first error %+v, want %s:6:3 syntax error", e, bad)
	}
	if !strings.HasPrefix(err.Error(), bad+":6:3: ") {
		t.Errorf("message %q", err.Error())
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "a.proto")
	if err := os.WriteFile(p, []byte("syntax = \"proto3\";\nimport \"nothere.proto\";\nmessage A { B b = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Compile([]string{p}, nil)
	if err == nil || !strings.Contains(err.Error(), p+":2:8:") || !strings.Contains(err.Error(), "nothere.proto") {
		t.Errorf("missing import: %v", err)
	}
	_, err = Compile([]string{filepath.Join(dir, "none.proto")}, nil)
	if err == nil || !strings.Contains(err.Error(), "none.proto") {
		t.Errorf("missing file: %v", err)
	}
}

// TestImportPaths: a file named under an import path imports others by
// their path from there.
func TestImportPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "api", "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("api/v1/types.proto", "syntax = \"proto3\";\npackage api.v1;\nmessage Id { int64 id = 1; }\n")
	write("api/v1/svc.proto", "syntax = \"proto3\";\npackage api.v1;\nimport \"api/v1/types.proto\";\nservice Users { rpc Get(Id) returns (Id); }\n")
	s, err := Compile([]string{filepath.Join(dir, "api/v1/svc.proto")}, []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Method("api.v1.Users/Get"); err != nil {
		t.Error(err)
	}
	if _, err := Compile([]string{filepath.Join(dir, "api/v1/svc.proto")}, nil); err == nil {
		t.Error("without the import path the import should not resolve")
	}
}

// FuzzCompile: any file content compiles or fails with positioned
// errors; it never panics.
func FuzzCompile(f *testing.F) {
	for _, name := range []string{echoProto, filepath.Join("testdata", "bad.proto")} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("syntax = \"proto3\"; message A { map<string, A> m = 1; oneof x { int32 y = 2; } }")
	f.Fuzz(func(t *testing.T, src string) {
		p := filepath.Join(t.TempDir(), "f.proto")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Compile([]string{p}, nil)
		if err == nil {
			_, _ = s.Method("a.B/C")
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 || len(errs) > maxErrors {
			t.Fatalf("error %T %v", err, err)
		}
	})
}

// echoProto is the gRPC example's service, also the test service.
var echoProto = filepath.Join("..", "..", "..", "examples", "grpc-echo", "echo.proto")
