package accesslog

import (
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

func FuzzParse(f *testing.F) {
	f.Add(`127.0.0.1 - - [13/May/2019:11:10:14 +0200] "GET /a/1?x HTTP/1.1" 200 512 "-" "curl" 0.155`)
	f.Add(`2019-05-13T11:10:14.123Z GET /allergies 200 12.345 abc 127.0.0.1`)
	f.Add(`10.0.0.1 - - [13/May/2019:11:10:14 +0000] "POST / HTTP/1.1" 500 12 "-" "ua" 2500000`)
	var ps []*parser
	for _, name := range []string{"combined_rt", "plateau", "apache_combined_D", "plateau_external"} {
		fm, err := Compile(name)
		if err != nil {
			f.Fatal(err)
		}
		p, err := newParser(fm, importer.Clock{})
		if err != nil {
			f.Fatal(err)
		}
		ps = append(ps, p)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var pl parsed
		for _, p := range ps {
			if bad := p.parse([]byte(line), &pl, true); bad == "" && pl.us < 0 {
				t.Fatalf("negative duration accepted from %q", line)
			}
		}
		_ = AppendTemplate(nil, []byte(line))
	})
}

func FuzzCompile(f *testing.F) {
	f.Add(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent $request_time`)
	f.Add(`%h %l %u %t "%r" %>s %b %{X-Id}i %D`)
	f.Add(`${a}${b}`)
	f.Fuzz(func(t *testing.T, format string) {
		fm, err := Compile(format)
		if err != nil {
			return
		}
		vals := make([][]byte, numRoles)
		_ = fm.matchInto([]byte(format), vals)
	})
}
