package wiretest

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert/jmeter"
)

// stream builds requests of users "g/1" and "g/2": each path in order,
// gap apart, with the header X-Tenant: tenant.
func stream(paths []string, gap time.Duration, tenant string) []Request {
	var out []Request
	for u, user := range []string{"g/1", "g/2"} {
		at := time.Duration(u) * time.Millisecond
		for i := 0; i < 5; i++ {
			for _, p := range paths {
				h := http.Header{}
				if tenant != "-" {
					h.Set("X-Tenant", tenant)
				}
				out = append(out, Request{User: user, Method: "GET", Host: "h", Path: p, Header: h, At: at})
				at += gap
			}
		}
	}
	return out
}

func kinds(r Result) string {
	var k []string
	for _, d := range r.Diffs {
		k = append(k, d.Kind+" "+d.Subject)
	}
	return strings.Join(k, "; ")
}

// TestCompare: the comparison finds each kind of difference the converter
// used to make, and none between equal streams.
func TestCompare(t *testing.T) {
	base := stream([]string{"/login", "/items", "/cart"}, 100*time.Millisecond, "acme")
	if r := Compare(base, stream([]string{"/login", "/items", "/cart"}, 100*time.Millisecond, "acme"), Options{}); len(r.Diffs) != 0 {
		t.Errorf("equal streams differ: %s", kinds(r))
	}
	for _, tc := range []struct {
		name string
		p    []Request
		want string
	}{
		{"header empty", stream([]string{"/login", "/items", "/cart"}, 100*time.Millisecond, ""), "header GET h/login X-Tenant"},
		{"header missing", stream([]string{"/login", "/items", "/cart"}, 100*time.Millisecond, "-"), "header GET h/items X-Tenant"},
		{"request never sent", stream([]string{"/login", "/items"}, 100*time.Millisecond, "acme"), "endpoint GET h/cart"},
		{"double slash", stream([]string{"/login", "//items", "/cart"}, 100*time.Millisecond, "acme"), "endpoint GET h//items"},
		{"order", stream([]string{"/login", "/cart", "/items"}, 100*time.Millisecond, "acme"), "order GET h/items → GET h/cart"},
		{"pacing lost", stream([]string{"/login", "/items", "/cart"}, 0, "acme"), "think"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(base, tc.p, Options{})
			if !strings.Contains(kinds(r), tc.want) {
				t.Errorf("differences %q do not name %q", kinds(r), tc.want)
			}
			if len(r.Unexplained) != len(r.Diffs) {
				t.Errorf("%d of %d differences unexplained, want all", len(r.Unexplained), len(r.Diffs))
			}
		})
	}
	// An explanation covers its difference; one that covers nothing is stale.
	r := Compare(base, stream([]string{"/login", "/items"}, 100*time.Millisecond, "acme"), Options{Expected: []Expect{
		{Kind: "endpoint", Why: "the cart is not converted"}, {Kind: "order", Why: "so the order changes"},
		{Kind: "first", Why: "covers nothing"}}})
	if len(r.Unexplained) != 0 || len(r.Stale) != 1 {
		t.Errorf("unexplained %v, stale %v; want none and the one covering nothing", r.Unexplained, r.Stale)
	}
}

// TestPrepareJMX: the rewritten plans parse, every thread group carries
// the user-key Header Manager and the bounds, setUp groups keep theirs.
func TestPrepareJMX(t *testing.T) {
	for _, f := range []string{"testdata/folio-cico/circulation_checkInCheckOut_orchid.jmx", "testdata/servicecomb-workshop/workshop.jmx", "testdata/folio-template/appName_workflowName.jmx"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := PrepareJMX(src, Bounds{Users: 3, RampUp: 2 * time.Second, Duration: 7 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		root, err := jmeter.Parse(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("%s: rewritten plan does not parse: %v", f, err)
		}
		n := 0
		for _, g := range root.Children {
			if !strings.HasSuffix(g.TestClass, "ThreadGroup") {
				continue
			}
			n++
			if len(g.Children) == 0 || g.Children[0].TestClass != "HeaderManager" || g.Children[0].Name != "wiretest user key" {
				t.Errorf("%s: thread group %q lacks the user key Header Manager", f, g.Name)
			}
			if g.TestClass == "ThreadGroup" && (g.Str("ThreadGroup.num_threads") != "3" || g.Str("ThreadGroup.duration") != "7" || g.Str("ThreadGroup.ramp_time") != "2") {
				t.Errorf("%s: thread group %q not bounded: %q users, %q s, ramp %q", f, g.Name, g.Str("ThreadGroup.num_threads"), g.Str("ThreadGroup.duration"), g.Str("ThreadGroup.ramp_time"))
			}
		}
		if n == 0 {
			t.Errorf("%s: no thread group", f)
		}
	}
	if _, err := PrepareJMX([]byte("<jmeterTestPlan/>"), Bounds{Users: 1}); err == nil {
		t.Error("a plan without thread groups was accepted")
	}
}

// TestPrepareJMXIterations: bounded by iterations, FOLIO's check-in/out
// plan runs its endless loop ("LC", a direct child of the thread group)
// that many times and the thread group once; a plan without an endless
// loop runs the thread group's loop that many times.
func TestPrepareJMXIterations(t *testing.T) {
	src, err := os.ReadFile("testdata/folio-cico/circulation_checkInCheckOut_orchid.jmx")
	if err != nil {
		t.Fatal(err)
	}
	out, err := PrepareJMX(src, Bounds{Users: 2, Iterations: 6, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "wiretest-once") {
		t.Error("the marker is left in the plan")
	}
	lc := regexp.MustCompile(`(?s)<LoopController [^>]*testname="LC"[^>]*>.*?</LoopController>`).FindString(s)
	if !strings.Contains(lc, `<intProp name="LoopController.loops">6</intProp>`) {
		t.Errorf("the endless loop is not bounded:\n%s", lc)
	}
	if !strings.Contains(s, `<stringProp name="LoopController.loops">1</stringProp>`) {
		t.Error("the thread group does not run once")
	}
	// The thread stops right after the loop's tree: the transactions
	// after it (reached only through Module Controllers) do not run.
	i := strings.Index(s, lc)
	stop := strings.Index(s, "wiretest: the end of the bounded loop")
	next := strings.Index(s, `testname="Get_login_page"`)
	if i < 0 || stop < i || next < stop {
		t.Errorf("the stop is not between the loop (%d) and the elements after it (%d): %d", i, next, stop)
	}
	plain, err := os.ReadFile("testdata/units/stopthread.jmx")
	if err != nil {
		t.Fatal(err)
	}
	out, err = PrepareJMX(plain, Bounds{Users: 2, Iterations: 5, Duration: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `<stringProp name="LoopController.loops">5</stringProp>`) {
		t.Errorf("the thread group does not run 5 iterations:\n%s", out)
	}
}

// formBody writes a multipart body of parts (name, filename or "",
// content type or "", content) with mime/multipart's writer, under its
// own random boundary, as each tool draws one.
func formBody(t *testing.T, parts [][4]string) Request {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p[0] + `"`
		if p[1] != "" {
			cd += `; filename="` + p[1] + `"`
		}
		h.Set("Content-Disposition", cd)
		if p[2] != "" {
			h.Set("Content-Type", p[2])
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = pw.Write([]byte(p[3]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Content-Type", w.FormDataContentType())
	return Request{User: "c/1", Method: "POST", Host: "h", Path: "/upload", Header: h, Body: b.String()}
}

// TestCompareMultipart: two multipart bodies under different boundaries
// are equal when their parts are; a part's name, filename, content type,
// content, or the parts' order, differing is found, in the part it is
// about.
func TestCompareMultipart(t *testing.T) {
	base := [][4]string{
		{"note", "", "", "hello world"},
		{"doc", "upload-file.csv", "text/csv", "key,val\na,1\n"},
	}
	a, b := formBody(t, base), formBody(t, base)
	if a.Header.Get("Content-Type") == b.Header.Get("Content-Type") {
		t.Fatal("the two bodies share a boundary; the test shows nothing")
	}
	if r := Compare([]Request{a}, []Request{b}, Options{}); len(r.Diffs) != 0 {
		t.Errorf("equal parts under different boundaries differ: %s", kinds(r))
	}
	for _, tc := range []struct {
		name  string
		parts [][4]string
		want  string
	}{
		{"order", [][4]string{base[1], base[0]}, "part POST h/upload order"},
		{"field name", [][4]string{{"Note", "", "", "hello world"}, base[1]}, "part POST h/upload order"},
		{"filename", [][4]string{base[0], {"doc", "upload.csv", "text/csv", "key,val\na,1\n"}}, "part POST h/upload doc Content-Disposition"},
		{"content type", [][4]string{base[0], {"doc", "upload-file.csv", "application/octet-stream", "key,val\na,1\n"}}, "part POST h/upload doc Content-Type"},
		{"text part typed", [][4]string{{"note", "", "text/plain", "hello world"}, base[1]}, "part POST h/upload note Content-Type"},
		{"file content", [][4]string{base[0], {"doc", "upload-file.csv", "text/csv", "key,val\n"}}, "part POST h/upload doc content"},
		{"field value", [][4]string{{"note", "", "", "hello+world"}, base[1]}, "part POST h/upload note content"},
		{"repeated name", [][4]string{base[0], base[1], base[1]}, "part POST h/upload order"},
	} {
		r := Compare([]Request{a}, []Request{formBody(t, tc.parts)}, Options{})
		if !strings.Contains(kinds(r), tc.want) {
			t.Errorf("%s: want %q among the differences, got %q", tc.name, tc.want, kinds(r))
		}
		for _, d := range r.Diffs {
			if d.Kind == "header" || d.Kind == "body" {
				t.Errorf("%s: a %s difference %s: the boundary leaked into the comparison", tc.name, d.Kind, d)
			}
		}
	}
	// A body cut short (no closing delimiter) is compared whole, and said
	// to be malformed.
	bad := formBody(t, base)
	bad.Body = bad.Body[:len(bad.Body)-20]
	if r := Compare([]Request{a}, []Request{bad}, Options{}); !strings.Contains(kinds(r), "part POST h/upload malformed") {
		t.Errorf("a malformed body: got %q", kinds(r))
	}
}

// TestCompareRepeatedValue: a value one side sends again and again where
// the other side varies it (a counter that never counts) is a difference,
// though the two share that value; a value drawn from two is not.
func TestCompareRepeatedValue(t *testing.T) {
	mk := func(q func(i int) string) []Request {
		var out []Request
		for i := 0; i < 24; i++ {
			out = append(out, Request{User: "g/1", Method: "GET", Host: "h", Path: "/count", Query: q(i), Header: http.Header{}, At: time.Duration(i) * 100 * time.Millisecond})
		}
		return out
	}
	counting := mk(func(i int) string { return fmt.Sprintf("n=%d", 10+5*i) })
	stuck := mk(func(int) string { return "n=10" })
	if r := Compare(counting, stuck, Options{}); !strings.Contains(kinds(r), "query GET h/count n") {
		t.Errorf("a counter stuck at its start: got %q", kinds(r))
	}
	if r := Compare(stuck, counting, Options{}); !strings.Contains(kinds(r), "query GET h/count n") {
		t.Errorf("a counter only plateau counts: got %q", kinds(r))
	}
	if r := Compare(counting, counting, Options{}); len(r.Diffs) != 0 {
		t.Errorf("equal counters differ: %q", kinds(r))
	}
	coin := mk(func(i int) string { return fmt.Sprintf("n=%d", i%2) })
	if r := Compare(coin, mk(func(int) string { return "n=0" }), Options{}); strings.Contains(kinds(r), "query") {
		t.Errorf("a draw between two values that came out the same every time is chance, not a difference: %q", kinds(r))
	}
}
