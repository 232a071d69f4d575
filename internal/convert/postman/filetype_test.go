package postman

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

// TestFilePartTypes: a file part without a contentType gets the type
// Postman's runtime looks up from its extension (the newman differential,
// TestPostmanNewmanBodies, shows it on the wire for .csv and .json); one
// whose extension the table does not know is sent as
// application/octet-stream and the report says so; a disabled body is not
// sent.
func TestFilePartTypes(t *testing.T) {
	col, err := Parse(strings.NewReader(`{"info":{"name":"t","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"item":[
 {"name":"up","request":{"method":"POST","url":"http://api.test/up","body":{"mode":"formdata","formdata":[
   {"key":"a","type":"file","src":"Data.CSV"},
   {"key":"b","type":"file","src":"blob.xyz"},
   {"key":"c","type":"file","src":"photo.jpg","contentType":"image/x-mine"}]}}},
 {"name":"off","request":{"method":"POST","url":"http://api.test/off","body":{"disabled":true,"mode":"raw","raw":"foo=bar"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "/c/t.postman_collection.json"})
	var mp *convert.Multipart
	var off *convert.Request
	for _, s := range p.Workloads[0].Scenario {
		if s.Request != nil && s.Request.Name == "up" {
			mp = s.Request.Multipart
		}
		if s.Request != nil && s.Request.Name == "off" {
			off = s.Request
		}
	}
	if mp == nil || len(mp.Files) != 3 {
		t.Fatalf("multipart %+v", mp)
	}
	for i, want := range []string{"text/csv", "application/octet-stream", "image/x-mine"} {
		if mp.Files[i].ContentType != want {
			t.Errorf("part %s: content type %q, want %q", mp.Files[i].Field, mp.Files[i].ContentType, want)
		}
	}
	if off == nil || off.Body != nil || len(off.Form) != 0 {
		t.Errorf("a disabled body is sent: %+v", off)
	}
	var notes []string
	for _, it := range rep.Items {
		notes = append(notes, it.Name+": "+it.Note)
	}
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, `file part "b": blob.xyz sent as application/octet-stream`) || strings.Contains(all, "Data.CSV sent as") {
		t.Errorf("the report does not say (only) which file part's type is a guess:\n%s", all)
	}
}

// TestAuthNotComputed: digest and OAuth auth are not computed; the
// report's first section says the requests go without them, once per
// type, and the items need the feature.
func TestAuthNotComputed(t *testing.T) {
	col, err := Parse(strings.NewReader(`{"info":{"name":"t","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"item":[
 {"name":"d1","request":{"method":"GET","url":"http://api.test/a","auth":{"type":"digest","digest":[{"key":"username","value":"u"}]}}},
 {"name":"d2","request":{"method":"GET","url":"http://api.test/b","auth":{"type":"digest"}}},
 {"name":"o","request":{"method":"GET","url":"http://api.test/c","auth":{"type":"oauth2"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, rep := Convert(col, Options{Source: "t.json"})
	b := strings.Join(rep.Behaviour, "\n")
	if strings.Count(b, "digest auth is not computed") != 1 || strings.Count(b, "oauth2 auth is not computed") != 1 {
		t.Errorf("behaviour: %q", rep.Behaviour)
	}
	for _, it := range rep.Items {
		if it.Type == "request" && !strings.HasPrefix(it.Needs, "auth type ") {
			t.Errorf("%s: needs %q", it.Name, it.Needs)
		}
	}
}
