package core_test

import (
	"strings"
	"testing"
	"unicode"

	"google.golang.org/grpc/codes"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestGRPCClass checks the table against grpc-go's own numbering and
// names: code DeadlineExceeded is class grpc_deadline_exceeded, and so on
// for every code, and each class parses back.
func TestGRPCClass(t *testing.T) {
	t.Parallel()
	if c := core.GRPCClass(uint32(codes.OK)); c != core.ErrNone {
		t.Errorf("OK is class %v, want none", c)
	}
	for code := codes.Canceled; code <= codes.Unauthenticated; code++ {
		var want strings.Builder
		want.WriteString("grpc")
		for _, r := range code.String() {
			if unicode.IsUpper(r) {
				want.WriteByte('_')
			}
			want.WriteRune(unicode.ToLower(r))
		}
		c := core.GRPCClass(uint32(code))
		if c.String() != want.String() {
			t.Errorf("code %d (%v) is class %q, want %q", code, code, c, want.String())
		}
		name := core.GRPCCodeName(uint32(code))
		if back, ok := core.ParseGRPCCode(name); !ok || back != uint32(code) || strings.ReplaceAll(strings.ToLower(name), "cancelled", "canceled") != strings.TrimPrefix(c.String(), "grpc_") {
			t.Errorf("code %d: name %q parses back as %d, %v (class %v)", code, name, back, ok, c)
		}
		if back, ok := core.ParseErrorClass(c.String()); !ok || back != c {
			t.Errorf("ParseErrorClass(%q) = %v, %v", c, back, ok)
		}
	}
	for _, code := range []uint32{17, 100, 1 << 31} {
		if c := core.GRPCClass(code); c != core.ErrProtocol {
			t.Errorf("code %d is class %v, want protocol", code, c)
		}
	}
	for in, want := range map[string]uint32{"ok": 0, "Canceled": 1, "14": 14, " NOT_FOUND ": 5} {
		if got, ok := core.ParseGRPCCode(in); !ok || got != want {
			t.Errorf("ParseGRPCCode(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "17", "-1", "NOTFOUND", "0x1"} {
		if _, ok := core.ParseGRPCCode(in); ok {
			t.Errorf("ParseGRPCCode(%q) accepted", in)
		}
	}
	if core.GRPCClass(uint32(codes.Unavailable)) != core.ErrGRPCUnavailable || core.GRPCClass(uint32(codes.DeadlineExceeded)) != core.ErrGRPCDeadlineExceeded {
		t.Error("named constants disagree with the table")
	}
}
