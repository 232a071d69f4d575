package rundir

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A message keeps fmt's English text and words the same sentence from its
// key and formatted arguments: the English rebuilt from the message is the
// text, byte for byte.
func TestMessage(t *testing.T) {
	for _, c := range []struct {
		format string
		args   []any
		key    string
		nums   []bool
	}{
		{"%s: %d of the file's %d lines had downstream calls; %.3f ms", []any{"/x/a.log", 2693, 2712, 0.019}, "%s: %s of the file's %s lines had downstream calls; %s ms", []bool{false, true, true, true}},
		{"labels ending in %q after %v (100%% of %s)", []any{" (net)", 2 * time.Second, errors.New("boom")}, "labels ending in %s after %s (100%% of %s)", []bool{false, false, false}},
		{"no verbs", nil, "no verbs", nil},
	} {
		text, m := NewMessage(c.format, c.args...)
		if want := fmt.Sprintf(c.format, c.args...); text != want {
			t.Errorf("text %q, want %q", text, want)
		}
		if m.Key != c.key {
			t.Errorf("key %q, want %q", m.Key, c.key)
		}
		for i, a := range m.Args {
			if a.Num != c.nums[i] {
				t.Errorf("%q arg %d (%q) num %v", c.format, i, a.Text, a.Num)
			}
		}
		var in Info
		in.AddMessage(text, m)
		if got := in.Worded(text, func(k string, a ...any) string { return fmt.Sprintf(k, a...) }); got != text {
			t.Errorf("rebuilt %q, want %q", got, text)
		}
		if got := in.Worded(text, func(k string, a ...any) string { return strings.ToUpper(fmt.Sprintf(k, a...)) }); got != strings.ToUpper(text) {
			t.Errorf("worded %q", got)
		}
	}
	// A format whose verbs do not match its arguments stays fmt's text.
	format := "%d and %d"
	text, m := NewMessage(format, 1)
	if m.Key != strings.ReplaceAll(text, "%", "%%") || len(m.Args) != 0 {
		t.Errorf("mismatched: %q %+v", text, m)
	}
	var in Info
	if got := in.Worded("a note without a message", func(string, ...any) string { return "x" }); got != "a note without a message" {
		t.Errorf("no message: %q", got)
	}
}

// TestWordedNum: a message's numbers are written by num; its other
// arguments as recorded.
func TestWordedNum(t *testing.T) {
	in := &Info{}
	text, m := NewMessage("%s: %d of %d lines", "a.log", 3304, 33240)
	in.AddMessage(text, m)
	tr := func(k string, a ...any) string { return fmt.Sprintf(k, a...) }
	if got := in.WordedNum(text, tr, func(s string) string { return "<" + s + ">" }); got != "a.log: <3304> of <33240> lines" {
		t.Errorf("WordedNum = %q", got)
	}
	if got := in.WordedNum(text, tr, nil); got != text {
		t.Errorf("WordedNum without num = %q, want %q", got, text)
	}
}
