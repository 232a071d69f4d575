package reporttest

import (
	"strings"
	"testing"
)

// The scan finds an English sentence in a Danish document wherever a
// reader meets it — a paragraph, a table cell, a chart's text — and
// passes code, names kept as written and Danish words that contain an
// English one.
func TestEnglishLeft(t *testing.T) {
	doc := `<html lang="da"><body><h2>Resumé</h2>
<p>Gennemsnitlig svartid 124 ms ved 111 kald/s; andel beståede checks.</p>
<p>Planen: <code>avg(response_time) &lt; 200ms and the rest</code> holdt.</p>
<pre>name: the plan of requests</pre>
<table><tr><td>list allergies</td><td>5.384</td></tr><tr><td>Response time of all requests</td></tr></table>
<svg><text>Svartid (ms)</text><text>CPU (% of one core)</text></svg>
<ul><li>Noter: /tmp/the and of/x.log læst</li></ul>
<p>Each point is the mean over 10s.</p>
</body></html>`
	got, err := EnglishLeft([]byte(doc), EnglishStopList, []string{"/tmp/the and of/x.log"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"of" in: Response time of all requests`, `"of" in: CPU (% of one core)`, `"the" in: Each point is the mean over 10s.`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
