package executor

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Declare reads the injection profile of a Java simulation: the steps of
// Gatling's common DSL inside injectOpen(…) and injectClosed(…) —
// atOnceUsers, rampUsers(n).during(d), constantUsersPerSec(r).during(d),
// rampUsersPerSec(a).to(b).during(d), constantConcurrentUsers(n).during(d),
// rampConcurrentUsers(a).to(b).during(d), nothingFor(d) — with values that
// are literals, fields holding them, or Integer.getInteger /
// System.getProperty fed by -J. A hold (a constant step, or a ramp from a
// level to itself) is a phase; the other steps take their time and are in
// no phase. Anything else in a profile (another step, a value read
// otherwise, andThen, whose start depends on when the users before it
// end) is not read: the phases then come from the users Gatling reports.
func (gatling) Declare(spec *Spec) Declared {
	src, err := os.ReadFile(spec.Script)
	if err != nil {
		return Declared{Why: err.Error()}
	}
	props := spec.propMap()
	return gatlingDeclared(stripJavaComments(string(src)), props)
}

var (
	reJavaLineComment  = regexp.MustCompile(`(?m)//[^\n]*$`)
	reJavaBlockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	reInject           = regexp.MustCompile(`\.inject(Open|Closed)\s*\(`)
)

func stripJavaComments(s string) string {
	return reJavaLineComment.ReplaceAllString(reJavaBlockComment.ReplaceAllString(s, ""), "")
}

// gatlingDeclared reads the holds of src (comments stripped).
func gatlingDeclared(src string, props map[string]string) Declared {
	if strings.Contains(src, ".andThen(") {
		return Declared{Why: "the simulation chains scenarios with andThen, whose start depends on when the users before them end"}
	}
	locs := reInject.FindAllStringSubmatchIndex(src, -1)
	if len(locs) == 0 {
		return Declared{Why: "no injectOpen or injectClosed in the simulation"}
	}
	g := &javaVals{src: src, props: props}
	var hs []hold
	// When the first user starts: the earliest first user of the
	// profiles, known when every profile's first injecting step starts
	// a user at its start.
	var first time.Duration
	firstSet, unknown := false, false
	var arr []time.Duration // every declared arrival, from the start
	for _, l := range locs {
		args, ok := balanced(src[l[1]:])
		if !ok {
			return Declared{Why: "an injection profile whose parentheses do not close"}
		}
		var t time.Duration
		seen := false // this profile's first user is placed
		for _, step := range splitTop(args) {
			h, d, err := g.step(step)
			if err != nil {
				return Declared{Why: fmt.Sprintf("injection step %q: %v", compact(step), err)}
			}
			if u := g.users; !seen && u != noUsers {
				seen = true
				switch {
				case u == usersLater:
					unknown = true
				case !firstSet || t < first:
					first, firstSet = t, true
				}
			}
			for _, at := range g.arr {
				if len(arr) < maxArrivals {
					arr = append(arr, t+at)
				}
			}
			if h != nil {
				h.from, h.to = t, t+d
				hs = append(hs, *h)
			}
			t += d
		}
	}
	ps, err := phasesOf(hs)
	if err != nil {
		return Declared{Why: "the simulation's injection profiles run at once: " + err.Error()}
	}
	if len(ps) == 0 {
		return Declared{Why: "its injection profile declares no hold (a constant rate or concurrency for a time)"}
	}
	d := Declared{Phases: ps, Why: "read from the simulation's injection profile", FirstUser: first, FirstKnown: firstSet && !unknown}
	if !g.shut && len(arr) > 0 {
		sort.Slice(arr, func(i, j int) bool { return arr[i] < arr[j] })
		d.Arrivals = arr
	}
	return d
}

func compact(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// codeBytes calls f with each byte of s that is outside a string literal
// (a backslash escapes the next byte inside one), until f returns false.
func codeBytes(s string, f func(i int, c byte) bool) {
	inStr := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		default:
			if !f(i, c) {
				return
			}
		}
	}
}

// balanced returns s up to the parenthesis that closes an opened one.
func balanced(s string) (string, bool) {
	depth, end := 1, -1
	codeBytes(s, func(i int, c byte) bool {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				end = i
				return false
			}
		}
		return true
	})
	if end < 0 {
		return "", false
	}
	return s[:end], true
}

// splitTop splits s at the commas outside parentheses and strings.
func splitTop(s string) []string {
	var out []string
	depth, from := 0, 0
	codeBytes(s, func(i int, c byte) bool {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[from:i]))
			from = i + 1
		}
		return true
	})
	if t := strings.TrimSpace(s[from:]); t != "" {
		out = append(out, t)
	}
	return out
}

// javaVals resolves the values of a simulation's injection steps.
type javaVals struct {
	src   string
	props map[string]string
	depth int
	users stepUsers       // the last step's users (step)
	arr   []time.Duration // the last step's arrivals, from its start (an open step)
	shut  bool            // a closed step was read: its users' starts are not declared
}

// maxArrivals bounds the declared arrivals kept to place the profile.
const maxArrivals = 200_000

// arrivals lists n arrivals over d, the i-th when count(t) reaches i,
// count being the users injected by t at a rate going from a to b per
// second (a ramp of n users over d when a and b are 0).
func arrivals(dst []time.Duration, n int, d time.Duration, a, b float64) []time.Duration {
	ds := d.Seconds()
	for i := 0; i < n && len(dst) < maxArrivals; i++ {
		var at float64
		switch {
		case a == 0 && b == 0:
			at = float64(i) * ds / float64(n)
		case a == b:
			at = float64(i) / a
		default: // a·t + (b−a)·t²/(2d) = i
			k := (b - a) / (2 * ds)
			at = (-a + math.Sqrt(a*a+4*k*float64(i))) / (2 * k)
		}
		dst = append(dst, time.Duration(at*float64(time.Second)))
	}
	return dst
}

// stepUsers says when a step starts its first user.
type stepUsers int

const (
	noUsers      stepUsers = iota // a pause, or none to inject
	usersAtStart                  // its first user at its start
	usersLater                    // a ramp from zero: after its start
)

// call cuts "name(args)rest" into name, args and rest.
func call(s string) (name, args, rest string, ok bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexByte(s, '(')
	if i < 0 {
		return "", "", "", false
	}
	a, ok := balanced(s[i+1:])
	if !ok {
		return "", "", "", false
	}
	return strings.TrimSpace(s[:i]), a, strings.TrimSpace(s[i+1+len(a)+1:]), true
}

// step reads one injection step: the hold it is (nil for a ramp, a
// pause or users at once) and how long it takes.
func (g *javaVals) step(s string) (*hold, time.Duration, error) {
	name, a, rest, ok := call(s)
	if !ok {
		return nil, 0, fmt.Errorf("not a step of Gatling's DSL")
	}
	// .randomized() changes the spacing of arrivals, not their rate.
	rest = strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(rest, ".randomized()")), ".randomized()")
	chain := map[string]string{}
	for rest != "" {
		if !strings.HasPrefix(rest, ".") {
			return nil, 0, fmt.Errorf("not a step of Gatling's DSL")
		}
		n, x, r, ok := call(rest[1:])
		if !ok {
			return nil, 0, fmt.Errorf("not a step of Gatling's DSL")
		}
		chain[n], rest = x, strings.TrimSpace(strings.TrimPrefix(r, ".randomized()"))
	}
	g.users, g.arr = noUsers, g.arr[:0]
	dur := func() (time.Duration, error) {
		d, ok := chain["during"]
		if !ok {
			return 0, fmt.Errorf("no during(…)")
		}
		return g.duration(d)
	}
	switch name {
	case "atOnceUsers":
		if len(chain) > 0 {
			break
		}
		n, err := g.num(a)
		if n > 0 {
			g.users = usersAtStart
			g.arr = arrivals(g.arr, int(n), 0, 0, 0)
		}
		return nil, 0, err
	case "nothingFor":
		if len(chain) > 0 {
			break
		}
		d, err := g.duration(a)
		return nil, d, err
	case "rampUsers":
		n, err := g.num(a)
		if err != nil {
			return nil, 0, err
		}
		d, err := dur()
		if n > 0 {
			g.users = usersAtStart
			g.arr = arrivals(g.arr, int(n), d, 0, 0)
		}
		return nil, d, err
	case "constantUsersPerSec", "constantConcurrentUsers", "rampUsersPerSec", "rampConcurrentUsers":
		from, err := g.num(a)
		if err != nil {
			return nil, 0, err
		}
		to := from
		if strings.HasPrefix(name, "ramp") {
			x, ok := chain["to"]
			if !ok {
				return nil, 0, fmt.Errorf("no to(…)")
			}
			if to, err = g.num(x); err != nil {
				return nil, 0, err
			}
		}
		d, err := dur()
		if err != nil {
			return nil, 0, err
		}
		switch {
		case from > 0:
			g.users = usersAtStart
		case to > 0:
			g.users = usersLater
		}
		if strings.HasSuffix(name, "PerSec") {
			g.arr = arrivals(g.arr, int(math.Round((from+to)/2*d.Seconds())), d, from, to)
		} else {
			g.shut = true
		}
		if from != to || from <= 0 || d <= 0 {
			return nil, d, nil // a ramp
		}
		if strings.HasSuffix(name, "PerSec") {
			return &hold{rate: from, unit: "users/s", label: rateLabel(from, time.Second, "users"), arrivals: true}, d, nil
		}
		if from != float64(int(from)) {
			return nil, 0, fmt.Errorf("%v concurrent users", from)
		}
		return &hold{users: int(from), label: fmt.Sprintf("%d users", int(from))}, d, nil
	}
	return nil, 0, fmt.Errorf("not one of the steps plateau reads")
}

var (
	reJavaNum    = regexp.MustCompile(`^[0-9][0-9_]*(\.[0-9_]+)?[lLdDfF]?$`)
	reJavaIdent  = regexp.MustCompile(`^[A-Za-z_]\w*$`)
	reJavaString = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)"$`)
)

// num resolves a number: a literal, a field that holds one,
// Integer.getInteger("k", def) / Long.getLong, or
// Integer.parseInt / Long.parseLong / Double.parseDouble of
// System.getProperty("k", "def"); -J k=v gives the property.
func (g *javaVals) num(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if reJavaNum.MatchString(s) {
		return strconv.ParseFloat(strings.TrimRight(strings.ReplaceAll(s, "_", ""), "lLdDfF"), 64)
	}
	if reJavaIdent.MatchString(s) {
		e, err := g.field(s)
		if err != nil {
			return 0, err
		}
		return g.num(e)
	}
	name, a, rest, ok := call(s)
	if !ok || rest != "" {
		return 0, fmt.Errorf("%q is not a value plateau reads", compact(s))
	}
	switch name {
	case "Integer.getInteger", "Long.getLong":
		args := splitTop(a)
		if len(args) == 0 || len(args) > 2 {
			break
		}
		key, ok := javaString(args[0])
		if !ok {
			break
		}
		if v, ok := g.props[key]; ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
		if len(args) == 2 {
			return g.num(args[1])
		}
		return 0, fmt.Errorf("property %s has no default and no -J %s=…", key, key)
	case "Integer.parseInt", "Long.parseLong", "Double.parseDouble", "Integer.valueOf", "Long.valueOf", "Double.valueOf":
		v, err := g.str(a)
		if err != nil {
			return 0, err
		}
		return strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	return 0, fmt.Errorf("%q is not a value plateau reads", compact(s))
}

// str resolves a string: a literal or System.getProperty("k"[, "def"]).
func (g *javaVals) str(s string) (string, error) {
	s = strings.TrimSpace(s)
	if v, ok := javaString(s); ok {
		return v, nil
	}
	name, a, rest, ok := call(s)
	if ok && rest == "" && name == "System.getProperty" {
		args := splitTop(a)
		if len(args) == 0 || len(args) > 2 {
			return "", fmt.Errorf("%q is not a value plateau reads", compact(s))
		}
		if key, ok := javaString(args[0]); ok {
			if v, ok := g.props[key]; ok {
				return v, nil
			}
			if len(args) == 2 {
				return g.str(args[1])
			}
			return "", fmt.Errorf("property %s has no default and no -J %s=…", key, key)
		}
	}
	if reJavaIdent.MatchString(s) {
		e, err := g.field(s)
		if err != nil {
			return "", err
		}
		return g.str(e)
	}
	return "", fmt.Errorf("%q is not a value plateau reads", compact(s))
}

func javaString(s string) (string, bool) {
	m := reJavaString.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	v, err := strconv.Unquote(`"` + m[1] + `"`)
	return v, err == nil
}

// duration resolves a duration: Duration.ofSeconds/ofMinutes/ofMillis(n),
// a number of seconds (the DSL's during(long)), or a field holding one.
func (g *javaVals) duration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if reJavaIdent.MatchString(s) {
		if e, err := g.field(s); err == nil {
			return g.duration(e)
		}
	}
	if name, a, rest, ok := call(s); ok && rest == "" {
		unit := map[string]time.Duration{"Duration.ofMillis": time.Millisecond, "Duration.ofSeconds": time.Second,
			"Duration.ofMinutes": time.Minute, "Duration.ofHours": time.Hour}[name]
		if unit > 0 {
			n, err := g.num(a)
			return time.Duration(n * float64(unit)), err
		}
	}
	n, err := g.num(s)
	return time.Duration(n * float64(time.Second)), err
}

// field finds the one assignment of a field or local variable name.
func (g *javaVals) field(name string) (string, error) {
	if g.depth > 64 {
		return "", fmt.Errorf("%s: too many references to follow", name)
	}
	re := regexp.MustCompile(`(?m)(?:^|[;{}\s])(?:(?:private|public|protected|static|final)\s+)*(?:int|long|double|float|Integer|Long|Double|String|Duration|var)\s+` + regexp.QuoteMeta(name) + `\s*=\s*([^;]+);`)
	m := re.FindAllStringSubmatch(g.src, -1)
	if len(m) != 1 {
		return "", fmt.Errorf("%s is not assigned once in the simulation", name)
	}
	g.depth++
	return m[0][1], nil
}

// Started is Gatling's start of injection: its first USER START record
// less the offset at which the profile starts its first user, where the
// profile declares it (Declared.FirstKnown) — Gatling's RUN record is
// written before its engine has warmed up, seconds before the injection
// on a busy machine — else the RUN record.
func (gatling) Started(out string, d Declared) (time.Time, bool) {
	log := gatlingLog(out)
	if log == "" {
		return time.Time{}, false
	}
	if len(d.Arrivals) > 0 {
		return startByArrivals(log, d.Arrivals)
	}
	if d.FirstKnown {
		return firstLine(log, 64<<20, "", func(line string) (time.Time, bool) {
			if field(line, '\t', 0) != "USER" {
				return time.Time{}, false
			}
			fs := strings.Split(line, "\t")
			for i := 2; i+1 < len(fs); i++ {
				if fs[i] == "START" {
					if ms, err := strconv.ParseInt(fs[i+1], 10, 64); err == nil {
						return time.UnixMilli(ms).Add(-d.FirstUser), true
					}
				}
			}
			return time.Time{}, false
		})
	}
	return firstLine(log, 1<<20, "", func(line string) (time.Time, bool) {
		if field(line, '\t', 0) != "RUN" {
			return time.Time{}, false
		}
		ms, err := strconv.ParseInt(field(line, '\t', 3), 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.UnixMilli(ms), true
	})
}

var _ Declarer = gatling{}

// startByArrivals places an open injection profile by the users Gatling
// started: the median, over the first users, of how much later each
// started than the profile declares it — users a busy JVM started late
// and then in a burst to catch up move the median little, where the first
// user alone or the RUN record (written before the engine warmed up) can
// be seconds off. Known once 20 users (or all the profile declares) have
// started.
func startByArrivals(log string, declared []time.Duration) (time.Time, bool) {
	f, err := os.Open(log)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	var starts []int64 // ms
	sc := bufio.NewScanner(io.LimitReader(f, 1<<30))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(starts) < len(declared) {
		line := sc.Text()
		if !strings.HasPrefix(line, "USER\t") {
			continue
		}
		fs := strings.Split(line, "\t")
		for i := 2; i+1 < len(fs); i++ {
			if fs[i] == "START" {
				if ms, err := strconv.ParseInt(fs[i+1], 10, 64); err == nil {
					starts = append(starts, ms)
				}
				break
			}
		}
	}
	if len(starts) < min(20, len(declared)) {
		return time.Time{}, false
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	diffs := make([]int64, len(starts))
	for i, ms := range starts {
		diffs[i] = ms*int64(time.Millisecond) - int64(declared[i])
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i] < diffs[j] })
	return time.Unix(0, diffs[len(diffs)/2]), true
}
