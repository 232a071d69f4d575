package wiretest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/postmanurl"
)

// nodeEncode is what newman's own modules make of a URL text whose
// variables are in (postman-collection's Url, written and parsed again as
// postman-runtime does, then postman-url-encoder's toNodeUrl: scheme,
// host, path and query) and of a urlencoded value (Node's querystring and
// postman-request's RFC 3986 pass), one JSON string in, one JSON pair out.
const nodeEncode = `
const mods = process.argv[1];
const sdk = require(mods + '/postman-collection');
const enc = require(mods + '/postman-url-encoder');
const qs = require('querystring');
const out = [];
for (const s of JSON.parse(require('fs').readFileSync(0, 'utf8'))) {
  const n = enc.toNodeUrl(new sdk.Url(new sdk.Url(s).toString()));
  const form = qs.stringify({k: s}).slice(2).replace(/[!'()*]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  out.push([n.protocol + '//' + n.host + n.path, form]);
}
process.stdout.write(JSON.stringify(out));
`

// TestPostmanEncodingMatchesNode runs postmanurl, the encoding plateau's
// encode: postman and percentencode() apply, and newman's own modules over
// the same texts — the cases of its unit test and 2,000 random URLs made of
// the bytes that matter (reserved characters, %, hex digits, spaces,
// backslashes, quotes, unicode) — and requires the same bytes from both.
func TestPostmanEncodingMatchesNode(t *testing.T) {
	bin := Newman(t)
	mods := filepath.Dir(filepath.Dir(bin)) // …/node_modules/.bin/newman
	if resolved, err := filepath.EvalSymlinks(bin); err == nil && !strings.HasSuffix(filepath.Dir(bin), ".bin") {
		mods = filepath.Dir(filepath.Dir(filepath.Dir(resolved))) // …/node_modules/newman/bin/newman.js
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node not installed; run internal/convert/wiretest/testdata/install-deps.sh")
	}
	ins := []string{
		"http://Example.COM/a b/c|d^e[f]%zz%2F/ü?x=1 2&y=a+b&z=%&w=\\\\&q=\"'<>`{}|^#frag",
		"example.com", "  http:\\\\\\\\h\\\\p\\\\q?a\\\\b", "http://h?", "http://h/p?&a&&b=",
		"HTTPS://h:8080/x?a=ü%41", "http://bücher.de/p", "http://u:p@h/p", "http://h/p:id/x?y#z?w", "http:///h/p",
		"http://0/x", "http://0x7f.1:80/", "http://1.2.3.4.5/", "http://a%41.test/", "http://127.0.0.1:8080/a|b?c",
	}
	rng := rand.New(rand.NewPCG(33, 1))
	alphabet := []string{"a", "Z", "0", "9", "f", "F", "%", "%2", "%2F", "%zz", " ", "\t", "\\", "/", "?", "#", "&", "=", "+", ":", "@",
		"[", "]", "|", "^", "{", "}", "<", ">", "\"", "'", "`", "!", "*", "(", ")", "~", ".", "-", "_", ";", ",", "$", "é", "東", "😀", "\x7f", "\x01"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		b.WriteString([]string{"http://", "https://", "HTTP://", "", "http://api.test", "http://API.Test:8080/"}[rng.IntN(6)])
		for n := rng.IntN(24); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		ins = append(ins, b.String())
	}
	in, _ := json.Marshal(ins)
	cmd := exec.Command(node, "-e", nodeEncode, mods)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	var want [][2]string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(ins) {
		t.Fatalf("node gave %d results for %d texts: %v", len(want), len(ins), err)
	}
	bad := 0
	for i, s := range ins {
		url := string(postmanurl.AppendURL(nil, []byte(s)))
		form := postmanurl.FormEscapeString(s)
		if url != want[i][0] || form != want[i][1] {
			bad++
			if bad <= 10 {
				t.Errorf("%q:\n url  plateau %q\n      newman  %q\n form plateau %q\n      newman  %q", s, url, want[i][0], form, want[i][1])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts encoded differently from newman's modules", bad, len(ins))
	}
}
