package convert

import (
	"strings"
	"testing"
)

func TestReadJSON(t *testing.T) {
	var v map[string]any
	if err := ReadJSON(strings.NewReader(`{"a": 1}`), "HAR", 1<<20, &v); err != nil || v["a"] != 1.0 {
		t.Fatalf("valid document: %v %v", v, err)
	}
	err := ReadJSON(strings.NewReader("{\n\"a\": 1,\n\"b\": }\n"), "HAR", 1<<20, &v)
	if err == nil || !strings.HasPrefix(err.Error(), "HAR line 3: ") {
		t.Fatalf("syntax error should name line 3: %v", err)
	}
	err = ReadJSON(strings.NewReader(`{"item": 5}`), "collection", 1<<20, &struct{ Item []int }{})
	if err == nil || !strings.HasPrefix(err.Error(), "collection is not valid: ") {
		t.Fatalf("type error: %v", err)
	}
	err = ReadJSON(strings.NewReader(strings.Repeat(" ", 2<<20)+"{}"), "HAR", 2<<20, &v)
	if err == nil || err.Error() != "HAR larger than 2 MiB" {
		t.Fatalf("oversized document: %v", err)
	}
}

func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		notes, needs []string
		st           Status
		need         string
	}{
		{nil, nil, Converted, ""},
		{[]string{"redirects not followed"}, nil, Partial, ""},
		{[]string{"a", "b"}, []string{"if", "multipart bodies"}, Partial, "if"},
	} {
		if st, need := StatusOf(c.notes, c.needs); st != c.st || need != c.need {
			t.Errorf("StatusOf(%q, %q) = %v %q, want %v %q", c.notes, c.needs, st, need, c.st, c.need)
		}
	}
}
