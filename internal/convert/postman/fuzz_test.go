package postman

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvert: any input is rejected with an error or converted into a
// plan that can be written; never a panic.
func FuzzConvert(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "shop.postman_collection.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"info":{"name":"x"},"item":[{"name":"a","request":{"url":{"host":["{{h}}"],"path":["a",{"value":"b"}]},"auth":{"type":"basic"}}}]}`))
	f.Add([]byte(`{"info":{"name":"x"},"auth":{"type":"bearer","bearer":{"token":"{{t}}"}},"item":[{"name":"a","request":{"url":"{{h}}/a"},"event":[{"listen":"test","script":{"exec":["var r = JSON.parse(responseBody);","var u = r.user || {};","postman.setEnvironmentVariable('t', u.token);"]}}]}]}`))
	// Bodies: a urlencoded key from a variable, basic auth with a password
	// variable, a disabled body, form-data with a file first.
	f.Add([]byte(`{"info":{"name":"x"},"item":[{"name":"a","request":{"method":"POST","url":"{{h}}/a?q={{v}}","auth":{"type":"basic","basic":[{"key":"username","value":"{{u}}"},{"key":"password","value":"{{pw}}"}]},"body":{"mode":"urlencoded","urlencoded":[{"key":"{{k}}","value":"a {{v}}+"},{"key":"x","value":"{{$guid}}"}]}}},{"name":"b","request":{"method":"POST","url":"{{h}}/b","body":{"disabled":true,"mode":"formdata","formdata":[{"key":"f","type":"file","src":["a.CSV","b.weird"]},{"key":"t","value":"v"}]}}},{"name":"c","request":{"method":"POST","url":"{{h}}/c","body":{"mode":"formdata","formdata":[{"key":"f","type":"file","src":"x.json"},{"key":"f","value":"again"}]}}}]}`))
	// URL objects: port, path variables (a number, a suffix, an old "id"),
	// query values null, numeric, disabled, with & # =, a hash.
	f.Add([]byte(`{"info":{"name":"x"},"variable":[{"key":"b","value":"http://o:p%2F@h/api"}],"item":[{"name":"a","request":{"url":"http://a:b%40c:d@h/x"}},{"name":"b","request":{"url":{"protocol":"http","auth":{"user":"{{u}}","password":"{{p}}"},"host":["h"]}}},{"name":"c","request":{"url":"{{b}}/c"}},{"name":"d","request":{"url":"{{b}}/d"}},{"name":"e","request":{"url":"u@h/e","header":[{"key":"Authorization","value":"x"}]}}]}`))
	f.Add([]byte(`{"info":{"name":"x"},"item":[{"name":"a","request":{"url":{"protocol":"https","host":"{{h}}.Test","port":8080,"path":"/u/:id/:f.json/:n","query":[{"key":"a","value":null},{"key":"k=","value":"x&y#z"},{"key":"n","value":3},{"key":"d","value":"1","disabled":true}],"hash":"h","variable":[{"key":"id","value":"{{v}}"},{"id":"f","value":"r"},{"key":"n","value":7}]},"auth":{"type":"apikey","apikey":[{"key":"in","value":"query"},{"key":"key","value":"k&#"},{"key":"value","value":"s3cr3t"}]}}}]}`))
	env := &Environment{Values: []EnvValue{{Key: "h", Value: "http://e.test"}, {Key: "pw", Value: "x", Type: "secret"}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The input read as an environment file too: rejected or read.
		if e, err := ParseEnvironment(bytes.NewReader(data)); err == nil {
			_, _ = Convert(&Collection{Item: []Item{}}, Options{Source: "fuzz.json", Globals: e})
		}
		col, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		p, rep := Convert(col, Options{Source: "fuzz.json", Environment: env})
		if _, err := p.Bytes(); err != nil {
			t.Fatalf("writing plan: %v", err)
		}
		var w bytes.Buffer
		if _, err := rep.WriteTo(&w); err != nil {
			t.Fatal(err)
		}
	})
}
