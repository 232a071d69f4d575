package har

import (
	"strings"
	"testing"
	"time"
)

// twoSessions: a journey recorded twice, a day apart, with a third-party
// call in the first.
const twoSessions = `{"log":{"entries":[
{"startedDateTime":"2026-01-01T10:00:00.000Z","time":100,"request":{"method":"GET","url":"http://shop.test/a","headers":[]},"response":{"status":200,"content":{}}},
{"startedDateTime":"2026-01-01T10:00:00.200Z","time":2000,"request":{"method":"GET","url":"https://stats.tracker.test/hit","headers":[]},"response":{"status":204,"content":{}}},
{"startedDateTime":"2026-01-01T10:00:02.500Z","time":100,"request":{"method":"GET","url":"http://shop.test/b","headers":[]},"response":{"status":200,"content":{}}},
{"startedDateTime":"2026-01-02T09:00:00.000Z","time":100,"request":{"method":"GET","url":"http://shop.test/c","headers":[]},"response":{"status":200,"content":{}}},
{"startedDateTime":"2026-01-02T09:00:01.100Z","time":100,"request":{"method":"GET","url":"http://shop.test/d","headers":[]},"response":{"status":200,"content":{}}}
]}}`

func planOf(t *testing.T, opt Options) (string, []string) {
	t.Helper()
	h, err := Parse(strings.NewReader(twoSessions))
	if err != nil {
		t.Fatal(err)
	}
	opt.Source = "two.har"
	p, rep := Convert(h, opt)
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rep.Notes
}

// TestTimeWindow: --to keeps the first session alone, with no capped
// day-long pause after it; --from keeps the second, whose first request
// gets no think time for the excluded day.
func TestTimeWindow(t *testing.T) {
	t.Parallel()
	to, err := ParseBound("1h")
	if err != nil {
		t.Fatal(err)
	}
	plan, notes := planOf(t, Options{To: to})
	for _, want := range []string{"/a", "/b", "stats.tracker.test"} {
		if !strings.Contains(plan, want) {
			t.Errorf("--to 1h: plan lacks %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "/c") || strings.Contains(plan, "/d") || strings.Contains(plan, "think: 1m") {
		t.Errorf("--to 1h: the second session or its pause is in the plan:\n%s", plan)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "2 of 5 entries started outside the window […, 2026-01-01T11:00:00Z)") {
		t.Errorf("--to 1h: notes %q", notes)
	}

	from, err := ParseBound("2026-01-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	plan, _ = planOf(t, Options{From: from})
	if strings.Contains(plan, "/a") || strings.Contains(plan, "/b") || !strings.Contains(plan, "/c") || !strings.Contains(plan, "/d") {
		t.Errorf("--from day 2: wrong requests:\n%s", plan)
	}
	// One think time: /c ends at 09:00:00.100, /d starts 1 s later.
	if n := strings.Count(plan, "think:"); n != 1 || !strings.Contains(plan, "think: 1s") {
		t.Errorf("--from day 2: %d think times, want one of 1s:\n%s", n, plan)
	}
}

// TestHostFilter: --host keeps the shop's requests; the tracker's call is
// not sent but its 2 s still count as the browser's work, so the pause
// before /b is measured from the tracker's end (2.2 s → 0.3 s).
func TestHostFilter(t *testing.T) {
	t.Parallel()
	to, _ := ParseBound("1h")
	plan, notes := planOf(t, Options{Hosts: []string{"shop.test"}, To: to})
	if strings.Contains(plan, "tracker") || !strings.Contains(plan, "/a") || !strings.Contains(plan, "/b") {
		t.Errorf("--host shop.test: wrong requests:\n%s", plan)
	}
	if !strings.Contains(plan, "think: 300ms") {
		t.Errorf("--host shop.test: the pause before /b is not 300ms:\n%s", plan)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "1 entries to hosts other than shop.test are not sent") {
		t.Errorf("notes %q", notes)
	}
	plan, _ = planOf(t, Options{Hosts: []string{"*.tracker.test"}, To: to})
	if !strings.Contains(plan, "stats.tracker.test") || strings.Contains(plan, "/a\n") {
		t.Errorf("--host *.tracker.test: wrong requests:\n%s", plan)
	}
}

func TestParseBound(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Bound{
		"":                     {},
		"90s":                  {Offset: 90 * time.Second, IsOffset: true},
		"2026-01-02T00:00:00Z": {At: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)},
	} {
		got, err := ParseBound(in)
		if err != nil || !got.At.Equal(want.At) || got.Offset != want.Offset || got.IsOffset != want.IsOffset {
			t.Errorf("ParseBound(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"-5s", "yesterday", "2026-01-02"} {
		if _, err := ParseBound(bad); err == nil {
			t.Errorf("ParseBound(%q) accepted", bad)
		}
	}
}
