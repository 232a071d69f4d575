package expr

import (
	"encoding/json"
	mrand "math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// env is a test Env: variables by name, a status and a body.
type env struct {
	names  []string
	vals   map[string]string
	status int
	body   string
	bodyB  []byte
	doc    any
	rng    *mrand.Rand
}

func (e *env) slot(name string) int {
	for i, n := range e.names {
		if n == name {
			return i
		}
	}
	e.names = append(e.names, name)
	return len(e.names) - 1
}
func (e *env) Var(slot int) string { return e.vals[e.names[slot]] }
func (e *env) Status() int         { return e.status }
func (e *env) Body() []byte {
	if e.bodyB == nil {
		e.bodyB = []byte(e.body)
	}
	return e.bodyB
}
func (e *env) Header(n string) string { return "h-" + n }
func (e *env) Rand() *mrand.Rand      { return e.rng }
func (e *env) JSON() any {
	if e.doc == nil {
		_ = json.Unmarshal([]byte(e.body), &e.doc)
	}
	return e.doc
}

func newEnv() *env {
	return &env{vals: map[string]string{"cart_id": "c-1", "empty": "", "n": "7", "name": "Ann Lee", "data.col": "x"},
		status: 200, body: `{"items":[{"id":1,"status":"open"},{"id":2,"status":"closed"},{"id":3,"status":"open"}],"ok":true}`,
		rng: mrand.New(mrand.NewPCG(1, 2))}
}

func TestConditions(t *testing.T) {
	t.Parallel()
	rows := []struct {
		src  string
		want bool
	}{
		{`${status} == 200 && ${cart_id} != ""`, true},
		{`status == 200 && ${empty} != ""`, false},
		{`${empty} == "" || false`, true},
		{`!(${n} > 10)`, true},
		{`${n} >= 7 && n < 7.5`, true},
		{`"10" > "9"`, true}, // both numbers: numeric
		{`"b" > "a"`, true},
		{`${name} =~ "^Ann"`, true},
		{`${name} !~ "^Ann"`, false},
		{`body =~ "\"open\""`, true},
		{`json("$.ok") == true`, true},
		{`json("$.items[?(@.status=='open')].id") == 1`, true},
		{`json("$.missing") == null`, true},
		{`json("$.items[1].status") == "closed"`, true},
		{`contains(body, "closed")`, true},
		{`len(${name}) == 7`, true},
		{`data.col == 'x'`, true},
		{`lower(name) == "ann lee"`, true},
		{`default(${empty}, "z") == "z"`, true},
	}
	for _, r := range rows {
		t.Run(r.src, func(t *testing.T) {
			e := newEnv()
			x, err := Compile(r.src, Options{Slot: e.slot})
			if err != nil {
				t.Fatal(err)
			}
			if got := x.Bool(e); got != r.want {
				t.Errorf("%s = %v, want %v", r.src, got, r.want)
			}
		})
	}
}

func TestFunctions(t *testing.T) {
	t.Parallel()
	rows := []struct {
		src  string
		want string // regexp the result must match in full
	}{
		{`uuid()`, `[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}`},
		{`randomInt(3, 5)`, `[345]`},
		{`randomChoice("a", "b")`, `[ab]`},
		{`randomString(8)`, `[A-Za-z0-9]{8}`},
		{`randomString(4, "xy")`, `[xy]{4}`},
		{`urlencode(name)`, `Ann\+Lee`},
		{`percentencode("a b+c!~")`, `a%20b%2Bc%21~`},
		{`pathencode("a b/c")`, `a%20b%2Fc`},
		{`urldecode("a%20b")`, `a b`},
		{`base64("hi")`, `aGk=`},
		{`base64decode("aGk=")`, `hi`},
		{`sha256("abc")`, `ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad`},
		{`hmac("key", "The quick brown fox jumps over the lazy dog")`, `f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8`},
		{`hmac("key", "The quick brown fox jumps over the lazy dog", "sha1")`, `de7c9b85b8b78aa6bc8a7a36f70a90701c9db4d9`},
		{`now("unix") > 1700000000`, `true`},
		{`now("yyyy-MM-dd'T'HH")`, `\d{4}-\d\d-\d\dT\d\d`},
		{`now("2006-01-02", "+1d")`, time.Now().Add(24 * time.Hour).Format("2006-01-02")},
		{`jsonEscape("a\"b")`, `a\\"b`},
		{`substr("abcdef", 1, 3)`, `bc`},
		{`substr("abc", 5)`, ``},
		{`upper("é")`, `É`},
		{`replace("a-b", "-", "+")`, `a\+b`},
		{`json("$.items[?(@.status=='open')].id")`, `1`},
		{`header("X-A")`, `h-X-A`},
		{`concat("a", ":", upper("b"), 1)`, `a:B1`},
		{`base64(concat("clerk", ":", "pw"))`, `Y2xlcms6cHc=`},
		{`seq(1, 10, 5)`, `10`},
		{`seq(4, 10, 5)`, `25`},
		{`seq(3, 0, 1, 4)`, `2`},
		{`seq(6, 0, 1, 4)`, `0`},
		{`seq(7, 0, 1, 4)`, `1`},
		{`seq(3, 1, 2, 6)`, `5`},
		{`seq(4, 1, 2, 6)`, `1`},
	}
	for _, r := range rows {
		t.Run(r.src, func(t *testing.T) {
			e := newEnv()
			x, err := Compile(r.src, Options{Slot: e.slot})
			if err != nil {
				t.Fatal(err)
			}
			got := x.String(e)
			if !regexp.MustCompile(`^(?:` + r.want + `)$`).MatchString(got) {
				t.Errorf("%s = %q, want %s", r.src, got, r.want)
			}
		})
	}
}

func TestCounter(t *testing.T) {
	t.Parallel()
	cs := &Counters{}
	a, _ := Compile(`counter("orders")`, Options{Counters: cs})
	b, _ := Compile(`counter("orders")`, Options{Counters: cs})
	e := newEnv()
	if got := a.String(e) + b.String(e) + a.String(e); got != "123" {
		t.Errorf("shared counter gave %q, want 123", got)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	rows := []struct {
		src, want string
		off       int
	}{
		{`${a} = 1`, `compare with ==`, 5},
		{`nosuch(1)`, `unknown function nosuch`, 0},
		{`uuid(1)`, `uuid takes no arguments`, 0},
		{`${a} =~ ${b}`, `needs a regex in quotes`, 8},
		{`${a} =~ "("`, `bad regex`, 8},
		{`"abc`, `unterminated string`, 0},
		{`(${a} == 1`, `expected )`, 10},
		{`now("yyyy-QQ")`, `pattern letter "Q"`, 4},
		{`json(x)`, `must be a literal`, 5},
		{``, `empty expression`, 0},
		{`${a} ==`, `unexpected end`, 7},
		{`${}`, `bad variable`, 0},
		{`hmac("k", "m", "md4")`, `not sha1, sha256 or sha512`, 15},
	}
	for _, r := range rows {
		t.Run(r.src, func(t *testing.T) {
			_, err := Parse(r.src)
			if err == nil {
				t.Fatalf("no error, want %q", r.want)
			}
			ee := err.(*Error)
			if !strings.Contains(ee.Msg, r.want) || ee.Off != r.off {
				t.Errorf("error %q at %d, want %q at %d", ee.Msg, ee.Off, r.want, r.off)
			}
		})
	}
}

// TestNoAllocs: a comparison of variables and the status allocates nothing.
func TestNoAllocs(t *testing.T) {
	e := newEnv()
	x, err := Compile(`${status} == 200 && ${cart_id} != "" && ${n} > 3 && body =~ "open"`, Options{Slot: e.slot})
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { _ = x.Bool(e) }); a != 0 {
		t.Errorf("condition allocates %v times", a)
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{`${a} == 1 && !(b =~ "x")`, `now("yyyy", "+1d")`, `f(`, `"\`, `json("$.a[?(@.b==1)]")`, `substr("ab",1,2)`, `seq(3, 1, 2, 6) == 5`, `seq(-9e18, 0, 1e-300, 1e300)`, `base64(concat(a, ":", "b"))`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e := newEnv()
		x, err := Compile(src, Options{Slot: e.slot})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		_ = x.Bool(e)
		_ = x.String(e)
	})
}
