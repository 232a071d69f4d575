package reporttest

import (
	"slices"
	"strings"
	"testing"
)

// The English words a Danish document must not hold come from the
// catalogue: words of keys whose Danish differs, less the words Danish
// writes too.
func TestCatalogueEnglish(t *testing.T) {
	words := CatalogueEnglish("da")
	if len(words) < 300 {
		t.Fatalf("only %d English words from the Danish catalogue: the derivation is broken", len(words))
	}
	for _, w := range []string{"the", "requests", "threads", "average", "throughput"} {
		if w == "throughput" {
			if words[w] {
				t.Error(`"throughput" is Danish performance vocabulary (reference 000 writes it), not English`)
			}
			continue
		}
		if !words[w] {
			t.Errorf("%q is not among the English words", w)
		}
	}
	for _, w := range []string{"status", "label", "cpu", "kald", "og", "fejl"} {
		if words[w] {
			t.Errorf("%q counted as English, but the Danish catalogue writes it", w)
		}
	}
	if CatalogueEnglish("en") != nil {
		t.Error("English has English words to avoid")
	}
}

// The scan reads whole tokens: identifiers and paths are names, a word
// inside a Danish word is not English, names kept as written are removed
// (the longest first), and each English word is named once per text.
func TestEnglishWordsLeft(t *testing.T) {
	words := map[string]bool{"the": true, "requests": true, "threads": true, "during": true}
	texts := []string{
		"Gennemsnitlig svartid 124 ms ved 111 kald/s.",
		"Svartid for the requests: the requests ventede.",
		`avg(response_time) < 200ms during "1: 2 nodes x 7 threads" holdt`,
		"/tmp/the_requests/x.log læst; response_time, backend=the-1",
		"løbende (during is inside no Danish word here: theme, threadsafe)",
		"1: 2 nodes x 7 threads",
	}
	got := EnglishWordsLeft(texts, words, []string{"1: 2 nodes x 7 threads", `avg(response_time) < 200ms during "1: 2 nodes x 7 threads"`})
	want := []string{"[the, requests] in: Svartid for the requests: the requests ventede.",
		"[during] in: løbende (during is inside no Danish word here: theme, threadsafe)"}
	if !slices.Equal(got, want) {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Markdown is read without its code, its anchors and its link targets,
// its escapes undone; HTML without code, with images' alternative text.
func TestDocumentTexts(t *testing.T) {
	md := "<a id=\"requirements\"></a>\n## Krav\n\n| avg(response\\_time) &lt; 200ms | `the code` |\n```yaml\nname: the plan\n```\n[Resumé](#summary)\n"
	got := strings.Join(MarkdownTexts(md), "\n")
	for _, bad := range []string{"requirements", "the code", "the plan", "#summary"} {
		if strings.Contains(got, bad) {
			t.Errorf("Markdown text holds %q:\n%s", bad, got)
		}
	}
	if !strings.Contains(got, "avg(response_time) < 200ms") || !strings.Contains(got, "[Resumé]") {
		t.Errorf("Markdown text lost its prose:\n%s", got)
	}
	h, err := HTMLTexts([]byte(`<html><body><p>Svartid <code>the code</code></p><img alt="the chart"><pre>the plan</pre></body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	if j := strings.Join(h, "|"); strings.Contains(j, "the code") || strings.Contains(j, "the plan") || !strings.Contains(j, "the chart") || !strings.Contains(j, "Svartid") {
		t.Errorf("HTML texts: %q", j)
	}
}

// A name is removed where it stands as words of its own, not inside a
// longer word.
func TestRemoveName(t *testing.T) {
	for _, c := range []struct{ s, name, want string }{
		{"sprunget over run", "run", "sprunget over  "},
		{"run: sprunget", "run", " : sprunget"},
		{`krav "1: 2 nodes" holdt`, `"1: 2 nodes"`, "krav   holdt"},
		{"brun", "run", "brun"},
	} {
		if got := removeName(c.s, c.name); got != c.want {
			t.Errorf("removeName(%q, %q) = %q, want %q", c.s, c.name, got, c.want)
		}
	}
}
