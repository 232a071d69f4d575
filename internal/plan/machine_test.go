package plan

import (
	"strings"
	"testing"
)

// Loads beyond what the machine holds are refused at the key that asks,
// naming the limit, its figure and why; loads within it pass, and without a
// Machine nothing is bounded.
func TestMachineBoundsLoad(t *testing.T) {
	t.Parallel()
	small := &Machine{CPUs: 2, OpenFiles: 20000, Memory: 24 << 30}
	plan := func(http, load string) string {
		return "name: m\ntarget: http://127.0.0.1:1\n" + http + "workloads:\n  w:\n    scenario:\n      - request: {url: /}\n    load: " + load + "\n"
	}
	for _, c := range []struct {
		name, http, load string
		m                *Machine
		want             string // "" when the plan passes
	}{
		{"rate 10^12", "", "{rate: 1000000000000/s, duration: 2s}", small,
			"7:18: load: rate 1,000,000,000,000/s is more than this machine can send: a request costs the generator at least 1µs of CPU and its 2 CPUs send at most 2,000,000/s"},
		{"rate 10^7", "", "{rate: 10000000/s, duration: 2s}", small, "7:18: load: rate 10,000,000/s is more than this machine can send"},
		{"rate within", "", "{rate: 2000000/s, duration: 2s}", small, ""},
		{"rate on 8 generators", "", "{rate: 10000000/s, duration: 2s}", &Machine{CPUs: 2, Generators: 8}, ""},
		{"rate on 2 generators", "", "{rate: 10000000/s, duration: 2s}", &Machine{CPUs: 2, Generators: 2},
			"rate 10,000,000/s (5,000,000 per generator of 2) is more than this machine can send"},
		{"users 10^9 per_user", "", "{users: 1000000000, duration: 2s}", small,
			"7:19: load: users 1,000,000,000 is more than this machine may open: each user keeps its own connections (http.connections: per_user) and the open-file limit (RLIMIT_NOFILE) is 20,000"},
		{"users 10^9 shared", "http: {connections: shared}\n", "{users: 1000000000, duration: 2s}", small,
			"8:19: load: users 1,000,000,000 needs more memory than this machine has: a user holds at least 3 KiB, so 2.8 TiB, and it has 24.0 GiB"},
		{"users within", "", "{users: 10000, duration: 2s}", small, ""},
		{"pacing users", "", "{users: 30000, pace: 1s, duration: 2s}", small, "7:19: load: users 30,000 is more than this machine may open"},
		{"max_users", "", "{rate: 10/s, duration: 2s, max_users: 100000}", small,
			"7:49: load: max_users 100,000 is more than this machine may open: each running iteration holds a connection"},
		{"default max_users over the limit", "", "{rate: 10/s, duration: 2s}", &Machine{OpenFiles: 512}, ""},
		{"stage rate", "", "{stages: [{rate: 100000000/s, duration: 1s}]}", small, "7:28: load: rate 100,000,000/s is more than"},
		{"stage users", "", "{stages: [{users: 50000, duration: 1s}]}", small, "7:29: load: users 50,000 is more than this machine may open"},
		{"step rate", "", "{steps: [{rate: 10/s, duration: 1s}, {rate: 100000000/s, duration: 1s}]}", small, "7:55: load: rate 100,000,000/s"},
		{"step users", "", "{steps: [{users: 30000, duration: 1s}]}", small, "7:28: load: users 30,000 is more"},
		{"no machine", "", "{rate: 1000000000000/s, duration: 2s}", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("m.yaml", []byte(plan(c.http, c.load)), t.TempDir(), Options{Machine: c.m})
			switch {
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}
