package compare

import (
	"reflect"
	"testing"
)

func TestNames(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		runs []RunFacts
		want []string
	}{
		{"distinct plans", []RunFacts{{Plan: "a", Users: 8}, {Plan: "b", Users: 8}}, []string{"a", "b"}},
		{"same plan, users differ", []RunFacts{{Plan: "shop", Users: 8}, {Plan: "shop", Users: 20}, {Plan: "shop", Users: 30}},
			[]string{"shop, 8 users", "shop, 20 users", "shop, 30 users"}},
		{"same plan and load: directory", []RunFacts{{Plan: "shop", Dir: "runs/r1", Users: 8}, {Plan: "shop", Dir: "runs/r2/", Users: 8}},
			[]string{"shop (r1)", "shop (r2)"}},
		{"roles win", []RunFacts{{Plan: "shop", Role: "release 1.4"}, {Plan: "shop", Role: "release 1.5"}}, []string{"release 1.4", "release 1.5"}},
		{"still equal: numbered", []RunFacts{{Plan: "shop", Dir: "x/r"}, {Plan: "shop", Dir: "y/r"}}, []string{"shop (r) (run 1)", "shop (r) (run 2)"}},
		{"same load among others: directory", []RunFacts{{Plan: "p", Dir: "full", Users: 10}, {Plan: "p", Dir: "cut", Users: 7}, {Plan: "p", Dir: "again", Users: 10}},
			[]string{"p, 10 users (full)", "p, 7 users", "p, 10 users (again)"}},
		{"rate", []RunFacts{{Plan: "p", Rate: 50}, {Plan: "p", Rate: 100}}, []string{"p, 50/s", "p, 100/s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Names(tc.runs); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Names = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	if k := Classify([]RunFacts{{Users: 8}, {Users: 20}, {Users: 30}}); k != Series {
		t.Fatalf("three load levels: %s, want series", k)
	}
	if k := Classify([]RunFacts{{Users: 8}, {Users: 8}, {Users: 8}}); k != Repeats {
		t.Fatalf("same load: %s, want repeats", k)
	}
	if !SamePhases(RunFacts{Phases: []string{"a", "b"}}, RunFacts{Phases: []string{"a", "b"}}) || SamePhases(RunFacts{Phases: []string{"a", "b"}}, RunFacts{Phases: []string{"a"}}) {
		t.Fatal("SamePhases wrong")
	}
}

// One user is "1 user": demo 002's load series listed its capacity
// search's last probe as "1 users".
func TestLoadWords(t *testing.T) {
	for _, c := range []struct {
		f    RunFacts
		want string
	}{
		{RunFacts{Users: 1}, "1 user"}, {RunFacts{Users: 2}, "2 users"}, {RunFacts{Users: 1, Rate: 5}, "1 user at 5/s"},
		{RunFacts{Users: 8, Rate: 2.5}, "8 users at 2.5/s"}, {RunFacts{Rate: 50}, "50/s"}, {RunFacts{}, ""},
	} {
		if got := c.f.Load(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
}
