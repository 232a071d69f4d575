package executor

import (
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Each segment's share of 5 users on 2 generators and 7 on 3: the
// remainder goes to the first segments, and the shares add up.
func TestShare(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ total, n int }{{5, 2}, {7, 3}, {4, 2}, {1, 1}, {10, 4}} {
		sum := 0
		for i := 0; i < c.n; i++ {
			s := share(c.total, i, c.n)
			if s < c.total/c.n || s > c.total/c.n+1 || i > 0 && s > share(c.total, i-1, c.n) {
				t.Errorf("share(%d, %d, %d) = %d", c.total, i, c.n, s)
			}
			sum += s
		}
		if sum != c.total {
			t.Errorf("%d on %d: shares add up to %d", c.total, c.n, sum)
		}
	}
}

// A segment's plan: every standard Thread Group's literal thread count
// divided (5 → 3 and 2; 1 → 1 and 0), or --set users divided; a count
// from a property, or a plugin's thread group, is refused with the way on.
func TestJMeterSegmentThreads(t *testing.T) {
	t.Parallel()
	src := []byte(`<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="a">
  <stringProp name="ThreadGroup.num_threads">5</stringProp>
</ThreadGroup>
<SetupThreadGroup guiclass="SetupThreadGroupGui" testclass="SetupThreadGroup" testname="setup">
  <stringProp name="ThreadGroup.num_threads">1</stringProp>
</SetupThreadGroup>
<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="b">
  <intProp name="ThreadGroup.num_threads">1</intProp>
</ThreadGroup>`)
	threads := regexp.MustCompile(`testname="(\w+)">\s*<\w+ name="ThreadGroup.num_threads">(\d+)<`)
	for seg, want := range []string{"a=5:3 setup=1:1 b=1:1", "a=5:2 setup=1:1 b=1:0"} {
		out, err := splitThreads(src, seg, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		in := threads.FindAllStringSubmatch(string(src), -1)
		for i, m := range threads.FindAllStringSubmatch(string(out), -1) {
			got = append(got, m[1]+"="+in[i][2]+":"+m[2])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("segment %d/2: %s, want %s", seg, strings.Join(got, " "), want)
		}
	}
	for _, bad := range []string{
		`<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="t"><stringProp name="ThreadGroup.num_threads">${__P(threads,10)}</stringProp></ThreadGroup>`,
		`<kg.apc.jmeter.threads.SteppingThreadGroup guiclass="x" testclass="kg.apc.jmeter.threads.SteppingThreadGroup" testname="u"></kg.apc.jmeter.threads.SteppingThreadGroup>`,
	} {
		if _, err := splitThreads([]byte(bad), 0, 2, nil); err == nil {
			t.Errorf("split %s", bad)
		} else if !strings.Contains(err.Error(), "--set users") && !strings.Contains(err.Error(), "distributed mode") {
			t.Errorf("refusal without a way on: %v", err)
		}
	}

	// --set users=5 on 2 generators: 3 and 2 threads, in the plan as run.
	dir := t.TempDir()
	plan := filepath.Join(dir, "p.jmx")
	if err := os.WriteFile(plan, src, 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "bin", "ApacheJMeter.jar"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		if k == "JMETER_HOME" {
			return home
		}
		return ""
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java on PATH to build JMeter's command with")
	}
	for seg, want := range []string{">3<", ">2<"} {
		out := t.TempDir()
		spec := &Spec{Script: plan, Dir: dir, Set: map[string]string{"users": "5"}, Segment: seg, Segments: 2, Getenv: env}
		if _, err := (jmeter{}).Command(spec, out); err != nil {
			t.Fatal(err)
		}
		for _, f := range spec.temp {
			os.Remove(f)
		}
		b, err := os.ReadFile(filepath.Join(out, "plan-as-run.jmx"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(b), "num_threads\""+want); got != 3 {
			t.Errorf("segment %d/2 of users=5: %d thread groups with %s threads:\n%s", seg, got, want, b)
		}
	}
	spec := &Spec{Script: plan, Dir: dir, Set: map[string]string{"users": "1"}, Segment: 1, Segments: 2, Getenv: env}
	if _, err := (jmeter{}).Command(spec, t.TempDir()); err == nil || !strings.Contains(err.Error(), "at least one") {
		t.Errorf("users=1 on 2 generators: %v", err)
	}
}

// k6's segment: its own execution segment and sequence, --vus as given
// (k6 divides it) and --rps divided.
func TestK6Segment(t *testing.T) {
	t.Parallel()
	bin := fakeBin(t, "k6")
	env := func(k string) string {
		if k == "K6" {
			return bin
		}
		return ""
	}
	for seg, want := range []string{"--rps 34 --execution-segment 0:1/3 --execution-segment-sequence 0,1/3,2/3,1",
		"--rps 33 --execution-segment 1/3:2/3 --execution-segment-sequence 0,1/3,2/3,1",
		"--rps 33 --execution-segment 2/3:1 --execution-segment-sequence 0,1/3,2/3,1"} {
		spec := &Spec{Script: "s.js", Set: map[string]string{"users": "7", "rate": "100"}, Segment: seg, Segments: 3, Getenv: env}
		cmd, err := k6{}.Command(spec, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if line := strings.Join(cmd.Args, " "); !strings.Contains(line, "--vus 7 ") || !strings.Contains(line, want) {
			t.Errorf("segment %d/3: %s\nwant %s", seg, line, want)
		}
	}
	if _, err := (k6{}).Command(&Spec{Script: "s.js", Set: map[string]string{"users": "2"}, Segment: 0, Segments: 3, Getenv: env}, t.TempDir()); err == nil {
		t.Error("2 users on 3 generators accepted")
	}
	if err := Segmented(locust{}); err == nil {
		t.Error("Locust split without a word")
	}
}

// The union of two instances' files: every row once, in time order with
// ties in generator order, each user count replaced by the sum of the
// instances' latest; files with other columns are refused; a missing
// file is named.
func TestUnion(t *testing.T) {
	t.Parallel()
	write := func(dir, name, s string) string {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	root := t.TempDir()
	a := write(filepath.Join(root, "a"), "results.jtl", "timeStamp,elapsed,label,responseMessage,allThreads\n"+
		"1000,5,x,OK,1\n1002,5,y,\"a, \"\"quoted\"\"\nmessage\",2\n1001,9,z,OK,2\n1010,1,x,OK,1\n")
	b := write(filepath.Join(root, "b"), "results.jtl", "timeStamp,elapsed,label,responseMessage,allThreads\n"+
		"1001,3,x,OK,3\n1005,3,y,OK,3\n")
	out := filepath.Join(root, "out")
	rows, missing, err := Union(jmeter{}, []string{a, b, filepath.Join(root, "gone")}, out)
	if err != nil {
		t.Fatal(err)
	}
	if rows != 6 || len(missing) != 1 || !strings.Contains(missing[0], "gone") {
		t.Errorf("rows %d, missing %q", rows, missing)
	}
	f, err := os.Open(filepath.Join(out, "results.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs[1:] {
		got = append(got, r[0]+" "+r[2]+" "+r[4])
	}
	// a's 1002 row stays before its 1001 row (its own order), b's 1001
	// row comes after a's 1000 and before a's 1002.
	want := "1000 x 1|1001 x 4|1002 y 5|1001 z 5|1005 y 5|1010 x 4"
	if strings.Join(got, "|") != want {
		t.Errorf("union:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if recs[3][3] != "a, \"quoted\"\nmessage" {
		t.Errorf("quoted field %q", recs[3][3])
	}

	k1 := write(filepath.Join(root, "k1"), K6Results, "metric_name,timestamp,metric_value,name\n"+
		"vus,100,1.000000,\nhttp_req_duration,150,2.5,/a\nvus,200,2.000000,\n")
	k2 := write(filepath.Join(root, "k2"), K6Results, "metric_name,timestamp,metric_value,name\n"+
		"vus,120,3.000000,\nhttp_req_duration,130,7.25,/b\n")
	kout := filepath.Join(root, "kout")
	if _, _, err := Union(k6{}, []string{k1, k2}, kout); err != nil {
		t.Fatal(err)
	}
	kb, _ := os.ReadFile(filepath.Join(kout, K6Results))
	if want := "metric_name,timestamp,metric_value,name\nvus,100,1.000000,\nvus,120,4.000000,\nhttp_req_duration,130,7.25,/b\n" +
		"http_req_duration,150,2.5,/a\nvus,200,5.000000,\n"; string(kb) != want {
		t.Errorf("k6 union:\n%s\nwant\n%s", kb, want)
	}

	c := write(filepath.Join(root, "c"), "results.jtl", "timeStamp,elapsed,label\n1,1,x\n")
	if _, _, err := Union(jmeter{}, []string{a, c}, filepath.Join(root, "out2")); err == nil || !strings.Contains(err.Error(), "different columns") {
		t.Errorf("different columns: %v", err)
	}
}

// Gatling: --set users becomes -Dusers=share when the simulation reads
// it; a split without a parameterised user count, or with -J users, is
// refused with the way on.
func TestGatlingSegment(t *testing.T) {
	t.Parallel()
	src := []byte(`int users = Integer.getInteger("users", 1); double r = Double.parseDouble(System.getProperty("rate", "1"));`)
	for seg, want := range []string{"-Drate=4 -Dusers=3", "-Drate=3 -Dusers=2"} {
		got, err := gatlingLoad(&Spec{Set: map[string]string{"users": "5", "rate": "7"}, Segment: seg, Segments: 2}, src)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("segment %d/2: %q, %v; want %s", seg, got, err, want)
		}
	}
	for _, c := range []struct {
		spec *Spec
		src  string
		want string
	}{
		{&Spec{Segments: 2}, string(src), "give --set users=N"},
		{&Spec{Set: map[string]string{"users": "4"}, Segments: 2}, `atOnceUsers(4)`, "only for a simulation that reads them"},
		{&Spec{Set: map[string]string{"duration": "1m"}}, string(src), "not --set duration"},
		{&Spec{Set: map[string]string{"users": "4"}, Props: []string{"users=4"}, Segments: 2}, string(src), "-J users=4 on several generators"},
	} {
		if _, err := gatlingLoad(c.spec, []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
}

// The union of two simulation.logs: the earliest RUN record, the
// assertions once, every other record once in time order.
func TestUnionGatling(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, s string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(d, "results", "sim-1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "results", "sim-1", "simulation.log"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	a := write("a", "RUN\tS\ts-a\t1000\t \t3.9.5\nASSERTION\tQUJD\nUSER\tshop\tSTART\t1001\nREQUEST\t\tcart\t1001\t1005\tOK\t \nUSER\tshop\tEND\t1010\n")
	b := write("b", "RUN\tS\ts-b\t999\t \t3.9.5\nASSERTION\tQUJD\nUSER\tshop\tSTART\t1002\nREQUEST\t\tpay\t1002\t1004\tKO\tboom\nERROR\toops\t1006\nUSER\tshop\tEND\t1008\n")
	out := filepath.Join(root, "out")
	rows, missing, err := Union(gatling{}, []string{a, b}, out)
	if err != nil || len(missing) != 0 || rows != 7 {
		t.Fatalf("rows %d, missing %v, %v", rows, missing, err)
	}
	got, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(ResultFile(gatling{}))))
	want := "RUN\tS\ts-b\t999\t \t3.9.5\nASSERTION\tQUJD\nUSER\tshop\tSTART\t1001\nUSER\tshop\tSTART\t1002\nREQUEST\t\tpay\t1002\t1004\tKO\tboom\n" +
		"REQUEST\t\tcart\t1001\t1005\tOK\t \nERROR\toops\t1006\nUSER\tshop\tEND\t1008\nUSER\tshop\tEND\t1010\n"
	if string(got) != want {
		t.Errorf("union:\n%q\nwant\n%q", got, want)
	}
	if gatlingLog(out) == "" {
		t.Error("the Gatling source does not find the union")
	}
}

// FuzzUnion: whatever two instances' files hold, Union returns an error
// or writes a file; it never panics.
func FuzzUnion(f *testing.F) {
	f.Add("timeStamp,elapsed,allThreads\n1,2,3\n", "timeStamp,elapsed,allThreads\n0,1,1\nx,\"y\n", "RUN\tS\ts\t1\n", "USER\tshop\tSTART\n")
	f.Add("metric_name,timestamp,metric_value\nvus,5,1.0\n", "metric_name,timestamp,metric_value\nvus,4,\n", "ASSERTION\n", "\n\tREQUEST\t\t")
	f.Fuzz(func(t *testing.T, a, b, ga, gb string) {
		root := t.TempDir()
		dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
		for i, tool := range []Tool{jmeter{}, k6{}, gatling{}} {
			for j, s := range []string{a, b} {
				if _, ok := tool.(gatling); ok {
					s = []string{ga, gb}[j]
				}
				p := filepath.Join(dirs[j], ResultFile(tool))
				if _, ok := tool.(gatling); ok {
					p = filepath.Join(dirs[j], "results", "x", "simulation.log")
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, _, _ = Union(tool, dirs, filepath.Join(root, "out", strconv.Itoa(i)))
		}
	})
}
