package jmeter

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

// treeCount counts the elements of a .jmx tree straight from the XML,
// independently of the converter: an element is any child of a <hashTree>
// that is not itself a <hashTree>. Enabled counts elements that JMeter runs
// (enabled, under enabled parents); disabled counts the disabled elements
// whose parents are enabled (their subtrees are skipped with them).
func treeCount(t *testing.T, data []byte) (enabled, disabled int) {
	t.Helper()
	type node struct {
		XMLName xml.Name
		Attrs   []xml.Attr `xml:",any,attr"`
		Kids    []node     `xml:",any"`
	}
	var root node
	if err := xml.Unmarshal(data, &root); err != nil {
		t.Fatalf("xml: %v", err)
	}
	var walk func(tree node, on bool)
	walk = func(tree node, on bool) {
		var prevOn bool
		for _, k := range tree.Kids {
			if k.XMLName.Local == "hashTree" {
				walk(k, prevOn)
				continue
			}
			en := true
			for _, a := range k.Attrs {
				if a.Name.Local == "enabled" && a.Value == "false" {
					en = false
				}
			}
			switch {
			case on && en:
				enabled++
			case on:
				disabled++
			}
			prevOn = on && en
		}
	}
	for _, k := range root.Kids {
		if k.XMLName.Local == "hashTree" {
			walk(k, true)
		}
	}
	return enabled, disabled
}

// corpusFiles lists the committed corpus and, when PLATEAU_JMX_CORPUS names
// a directory, every .jmx below it.
func corpusFiles(t *testing.T) []string {
	var files []string
	dirs := []string{filepath.Join("testdata", "corpus"), filepath.Join("testdata", "plans")}
	if d := os.Getenv("PLATEAU_JMX_CORPUS"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() && strings.HasSuffix(strings.ToLower(p), ".jmx") {
				files = append(files, p)
			}
			return nil
		})
	}
	sort.Strings(files)
	return files
}

// TestCorpus converts every plan of the corpus: the converted plan loads
// with plateau's plan loader, and the report accounts for every enabled
// element of the tree (counted from the XML, not by the converter).
func TestCorpus(t *testing.T) {
	files := corpusFiles(t)
	if len(files) == 0 {
		t.Fatalf("corpus has %d plans; testdata/corpus is missing", len(files))
	}
	var total, external convert.Counts
	nExternal := 0
	extDir := os.Getenv("PLATEAU_JMX_CORPUS")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := Parse(bytes.NewReader(data))
		if err != nil {
			var probe struct{}
			if xml.Unmarshal(data, &probe) != nil {
				// Not XML at all (JMeter cannot open it either): the error
				// must say so.
				if !strings.Contains(err.Error(), "not valid XML") {
					t.Errorf("%s: %v", f, err)
				}
				t.Logf("%s: skipped, not valid XML: %v", f, err)
				continue
			}
			t.Errorf("%s: %v", f, err)
			continue
		}
		p, rep := Convert(root, Options{Source: f})
		if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
			src, _ := p.Bytes()
			t.Errorf("%s: converted plan does not load:\n%v\n%s", f, err, src)
			continue
		}
		en, dis := treeCount(t, data)
		c := rep.Count()
		if c.Enabled != en || c.Disabled != dis {
			t.Errorf("%s: tree has %d enabled and %d disabled elements; report accounts for %d and %d", f, en, dis, c.Enabled, c.Disabled)
		}
		// Every enabled item has a path and a type.
		for _, it := range rep.Items {
			if it.Type == "" {
				t.Errorf("%s: item %q has no type", f, it.Path)
			}
		}
		var md bytes.Buffer
		if _, err := rep.WriteTo(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), fmt.Sprintf("%d enabled elements", en)) {
			t.Errorf("%s: report does not state the %d enabled elements", f, en)
		}
		sum := func(t *convert.Counts) {
			t.Enabled += c.Enabled
			t.Converted += c.Converted
			t.Partial += c.Partial
			t.NotNeeded += c.NotNeeded
			t.NotConverted += c.NotConverted
			t.Disabled += c.Disabled
		}
		sum(&total)
		if extDir != "" && strings.HasPrefix(f, extDir) {
			sum(&external)
			nExternal++
		}
		if testing.Verbose() {
			t.Logf("%-90s %4d enabled  %5.1f %% converted", f, c.Enabled, 100*c.ConvertedShare())
		}
	}
	if nExternal > 0 {
		t.Logf("PLATEAU_JMX_CORPUS alone: %d plans, %d enabled elements: %d converted, %d in part, %d not needed, %d not converted; %.1f %% converted (%.1f %% fully)",
			nExternal, external.Enabled, external.Converted, external.Partial, external.NotNeeded, external.NotConverted,
			100*external.ConvertedShare(), 100*float64(external.Converted)/float64(max(external.Enabled, 1)))
	}
	t.Logf("corpus: %d plans, %d enabled elements: %d converted, %d in part, %d not needed, %d not converted; %.1f %% converted (%.1f %% fully)",
		len(files), total.Enabled, total.Converted, total.Partial, total.NotNeeded, total.NotConverted,
		100*total.ConvertedShare(), 100*float64(total.Converted)/float64(max(total.Enabled, 1)))
}
