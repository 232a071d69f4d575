package cli

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// echoServer answers every request on 127.0.0.1 with what it received —
// the request line, every header (Cookie, Authorization, X-Api-Key …) and
// the body — in a 500 body, so every secret sent comes back to be written
// into a failure message; /login also sets a session cookie (jar) whose
// value is another secret.
func echoServer(t *testing.T, jar string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s; body=%s;", r.Method, r.URL.RequestURI(), body)
		names := make([]string, 0, len(r.Header))
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&b, " %s=%s;", strings.ToLower(k), strings.Join(r.Header[k], ","))
		}
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: jar, Path: "/"})
			fmt.Fprint(w, "welcome")
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// plateau runs the CLI as its own process with extra environment, and
// returns its combined output (the console).
func plateau(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := plateauCmd(args...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSecretsEveryCommand plants a distinct random secret in every kind of
// input — a plan header, a request cookie, a cookie the server sets (jar),
// a JSON body member, a secret-named plan variable, a --set value, an
// environment variable, a HAR recording, a Postman collection, a JMeter
// plan and a JMeter results file — sends the run's against a loopback
// server that echoes all of it back, runs every command that writes
// (run, run --trace, run --segment ×2 + merge, report, export, compare,
// study, import + report, convert har/postman/jmeter, and a run of the
// converted HAR plan with its secrets from the environment), and looks for
// every secret, whole or any 10-byte piece of it, in every file written
// and in every command's console output.
func TestSecretsEveryCommand(t *testing.T) {
	sec := map[string]string{}
	for _, k := range []string{"header", "cookie", "jar", "body", "var", "set", "env",
		"har-header", "har-query", "har-form", "har-json", "har-cookie",
		"pm-header", "pm-query", "pm-form", "pm-json", "pm-bearer", "pm-var",
		"jmx-var", "jmx-auth", "jtl-url", "jtl-message"} {
		sec[k] = randomSecret(t, "", 24)
	}
	srv := echoServer(t, sec["jar"])
	// Inputs are written under in/, every command writes under out/:
	// only out/ is searched.
	base := t.TempDir()
	if d := os.Getenv("PLATEAU_KEEP_RUN"); d != "" {
		base = d
	}
	dir := filepath.Join(base, "out")
	if err := os.MkdirAll(filepath.Join(base, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name, text string) string {
		p := filepath.Join(base, "in", name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := []string{"PLATEAU_T_TOKEN=" + sec["env"]}
	var consoles []string
	must := func(okCodes string, args ...string) string {
		t.Helper()
		out, err := plateau(t, env, args...)
		consoles = append(consoles, out)
		code := 0
		if err != nil {
			code = -1
			if ee, ok := err.(interface{ ExitCode() int }); ok {
				code = ee.ExitCode()
			}
		}
		if !strings.Contains(okCodes, fmt.Sprint(code)) {
			t.Fatalf("plateau %s: exit %d (want %s)\n%s", strings.Join(args, " "), code, okCodes, out)
		}
		return out
	}

	planPath := write("plan.yaml", fmt.Sprintf(`name: every-secret
target: %s
vars:
  user_pwd: %s
  api_key: placeholder
http:
  headers: {X-Api-Key: %s}
workloads:
  w:
    scenario:
      - request: {name: login, url: /login}
      - request:
          name: echo
          method: POST
          url: /echo
          headers: {Authorization: "Bearer ${env.PLATEAU_T_TOKEN}", X-Tenant: "${api_key}", X-Pin: "${user_pwd}"}
          cookies: {sid: %s}
          json: {user: bob, password: %s}
    load: {users: 2, iterations: 2}
`, srv.URL, sec["var"], sec["header"], sec["cookie"], sec["body"]))
	set := "vars.api_key=" + sec["set"]
	// 1 = a requirement broke is fine: the point is what is written.
	must("01", "run", planPath, "-o", path("run"), "--set", set)
	must("01", "run", planPath, "-o", path("trace"), "--set", set, "--trace", "1")
	must("01", "run", planPath, "-o", path("seg0"), "--set", set, "--segment", "0/2", "-q")
	must("01", "run", planPath, "-o", path("seg1"), "--set", set, "--segment", "1/2", "-q")
	must("01", "merge", path("seg0"), path("seg1"), "-o", path("merged"))
	must("01", "report", path("run"))
	must("0", "export", path("run"), "--format", "csv", "-o", path("export-csv"))
	must("0", "export", path("run"), "-o", path("export-parquet"))
	must("01", "compare", path("run"), path("merged"), "-o", path("compare"))
	study := write("study.yaml", fmt.Sprintf("title: secrets\nruns:\n  - {dir: %s, role: baseline}\n  - {dir: %s, role: candidate}\n", path("run"), path("merged")))
	must("013", "study", study, "-o", path("study"))

	// A JMeter results file whose URLs and failure messages hold secrets.
	var jtl strings.Builder
	jtl.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	start := time.Now().Add(-time.Hour).UnixMilli()
	for i := range 40 {
		ok, msg := "true", ""
		if i%4 == 0 {
			ok, msg = "false", "denied: Authorization: Bearer "+sec["jtl-message"]
		}
		fmt.Fprintf(&jtl, "%d,%d,get,%s,OK,t 1-1,text,%s,%s,100,50,1,1,http://127.0.0.1:1/items?api_key=%s,5,0,1\n",
			start+int64(i)*250, 10+i%7, map[string]string{"true": "200", "false": "401"}[ok], ok, msg, sec["jtl-url"])
	}
	must("01", "import", "jmeter", write("results.jtl", jtl.String()), "-o", path("imported"), "--keep-samples")
	must("01", "report", path("imported"))

	// Converters.
	if err := os.MkdirAll(path("conv"), 0o755); err != nil {
		t.Fatal(err)
	}
	u := srv.URL
	har := fmt.Sprintf(`{"log":{"version":"1.2","creator":{"name":"t","version":"1"},"entries":[
{"startedDateTime":"2026-01-01T00:00:00.000Z","time":5,"request":{"method":"POST","url":"%s/signin?api_key=%s&page=2","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/x-www-form-urlencoded"},{"name":"X-Api-Key","value":"%s"},{"name":"Cookie","value":"sid=%s"}],"queryString":[],"postData":{"mimeType":"application/x-www-form-urlencoded","text":"user=bob&password=%s"}},"response":{"status":200,"headers":[],"content":{"mimeType":"text/plain","text":"ok"}}},
{"startedDateTime":"2026-01-01T00:00:01.000Z","time":5,"request":{"method":"POST","url":"%s/api","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"}],"queryString":[],"postData":{"mimeType":"application/json","text":"{\"client_secret\":\"%s\",\"name\":\"x\"}"}},"response":{"status":500,"headers":[],"content":{"mimeType":"text/plain","text":"ok"}}}
]}}`, u, sec["har-query"], sec["har-header"], sec["har-cookie"], sec["har-form"], u, sec["har-json"])
	must("0", "convert", "har", write("rec.har", har), "-o", path("conv/har.yaml"))
	pm := fmt.Sprintf(`{"info":{"name":"leaky","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"variable":[{"key":"baseUrl","value":"%s"},{"key":"db_password","value":"%s"}],
"item":[
{"name":"login","request":{"method":"POST","header":[{"key":"X-Api-Key","value":"%s"}],
 "url":{"raw":"{{baseUrl}}/login?api_key=%s","host":["{{baseUrl}}"],"path":["login"],"query":[{"key":"api_key","value":"%s"}]},
 "body":{"mode":"urlencoded","urlencoded":[{"key":"user","value":"bob"},{"key":"password","value":"%s"}]}}},
{"name":"api","request":{"method":"POST","auth":{"type":"bearer","bearer":[{"key":"token","value":"%s"}]},"header":[{"key":"Content-Type","value":"application/json"}],
 "url":{"raw":"{{baseUrl}}/api","host":["{{baseUrl}}"],"path":["api"]},
 "body":{"mode":"raw","raw":"{\"client_secret\":\"%s\",\"db\":\"{{db_password}}\"}"}}}
]}`, u, sec["pm-var"], sec["pm-header"], sec["pm-query"], sec["pm-query"], sec["pm-form"], sec["pm-bearer"], sec["pm-json"])
	must("0", "convert", "postman", write("col.json", pm), "-o", path("conv/pm.yaml"))
	jmx, err := os.ReadFile("../convert/jmeter/testdata/plans/features.jmx")
	if err != nil {
		t.Fatal(err)
	}
	j := strings.NewReplacer("hunter2-literal", sec["jmx-auth"], ">tenant<", ">api_key<", "${tenant}", "${api_key}", ">acme<", ">"+sec["jmx-var"]+"<").Replace(string(jmx))
	if !strings.Contains(j, sec["jmx-auth"]) || !strings.Contains(j, sec["jmx-var"]) {
		t.Fatal("features.jmx changed: the secrets were not planted")
	}
	must("02", "convert", "jmeter", write("plan.jmx", j), "-o", path("conv/jmx.yaml"))

	// The converted HAR plan, run with its secrets from the environment:
	// the server echoes them back as it did for the recording.
	harEnv := []string{"HAR_API_KEY=" + sec["har-query"], "HAR_X_API_KEY=" + sec["har-header"], "HAR_COOKIE_SID=" + sec["har-cookie"],
		"HAR_COOKIE=sid=" + sec["har-cookie"], "HAR_PASSWORD=" + sec["har-form"], "HAR_CLIENT_SECRET=" + sec["har-json"]}
	out, err := plateau(t, harEnv, "run", path("conv/har.yaml"), "-o", path("har-run"))
	consoles = append(consoles, out)
	if _, serr := os.Stat(path("har-run/summary.json")); serr != nil {
		t.Fatalf("the converted HAR plan did not run (%v):\n%s", err, out)
	}
	// The wire: the converted plan sent the recorded secrets.
	if b, _ := os.ReadFile(path("har-run/samples.jtl")); !strings.Contains(string(b), "body=user=bob&password=***;") {
		t.Errorf("the converted HAR plan's echo does not show the form it sent (masked):\n%s", b)
	}

	if err := os.WriteFile(path("consoles.txt"), []byte(strings.Join(consoles, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every command wrote what it should have: otherwise the grep below
	// proves nothing.
	for _, f := range []string{"run/samples.jtl", "run/intervals.ndjson", "run/summary.json", "run/junit.xml", "run/report.html",
		"run/report.md", "run/plan.yaml", "run/run.json", "trace/trace.txt", "merged/summary.json", "merged/samples.jtl",
		"export-csv", "export-parquet", "compare/compare.md", "study/study.md", "imported/summary.json", "imported/samples.jtl",
		"conv/har.yaml", "conv/har.convert.md", "conv/pm.yaml", "conv/pm.convert.md", "conv/jmx.yaml", "conv/jmx.convert.md"} {
		if _, err := os.Stat(path(f)); err != nil {
			t.Errorf("%s was not written", f)
		}
	}
	// The echo reached the files (masked): the secrets were on the wire
	// and came back.
	if b, _ := os.ReadFile(path("trace/trace.txt")); !strings.Contains(string(b), "cookie=JSESSIONID=***; sid=***") || !strings.Contains(string(b), `body={"user":"bob","password":"***"}`) {
		t.Errorf("trace.txt does not show the echoed cookies masked:\n%.2000s", b)
	}
	// Parquet columns are zstd-compressed: their values are read back
	// into text beside the files, so the search sees them.
	n := 0
	err = filepath.WalkDir(path("export-parquet"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".parquet" {
			return err
		}
		n++
		return os.WriteFile(p+".txt", []byte(parquetText(t, p)), 0o644)
	})
	if err != nil || n == 0 {
		t.Fatalf("reading the Parquet export: %d files, %v", n, err)
	}
	for name, s := range sec {
		for _, l := range leaks(t, dir, s) {
			t.Errorf("%s secret leaked: %s", name, l)
		}
	}
}

// parquetText is every value of a Parquet file as text, one row a line.
func parquetText(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var b strings.Builder
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		buf := make([]parquet.Row, 64)
		for {
			k, err := rows.ReadRows(buf)
			for _, r := range buf[:k] {
				for _, v := range r {
					b.WriteString(v.String())
					b.WriteByte(' ')
				}
				b.WriteByte('\n')
			}
			if err != nil {
				break
			}
		}
		rows.Close()
	}
	return b.String()
}
