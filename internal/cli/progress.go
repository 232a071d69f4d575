package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/locale"
)

// progressPrinter shows a run's progress: a live panel redrawn in place on a
// terminal, one plain line every 10 s otherwise (CI logs).
type progressPrinter struct {
	w         io.Writer
	tty       bool
	quiet     bool
	mu        sync.Mutex
	lines     int // lines of the last panel, to redraw over it
	lastPlain time.Time
	// monitors, when set, gives the panel's monitor lines.
	monitors func() []string
	// loc is the run's language (the plan's lang:); nil is English.
	loc *locale.Locale
}

func newProgressPrinter(st *State, quiet bool) *progressPrinter {
	p := &progressPrinter{w: st.Stderr, quiet: quiet}
	if f, ok := st.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *progressPrinter) update(pr *engine.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		if time.Since(p.lastPlain) < 10*time.Second {
			return
		}
		p.lastPlain = time.Now()
		fmt.Fprint(p.w, p.loc.T("[%s] phase %q, %d users, %.1f req/s (last s %.1f), p50 %.1f ms, p95 %.1f ms, errors %.2f%%, %d samples\n",
			fmtDur(pr.Elapsed), pr.Phase, pr.Users, pr.Run.RPS, pr.Second.RPS, pr.Run.P50Ms, pr.Run.P95Ms, pr.Run.ErrorPct, pr.Run.Count))
		return
	}
	var b strings.Builder
	if p.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", p.lines)
	}
	rem := "?"
	if pr.Remaining > 0 {
		rem = fmtDur(pr.Remaining)
	}
	l := p.loc
	n := func(format string, v ...any) string { return l.Num(fmt.Sprintf(format, v...)) }
	fmt.Fprint(&b, l.T("elapsed %s  remaining ~%s  phase %-16q users %d  dropped %d\n", fmtDur(pr.Elapsed), rem, pr.Phase, pr.Users, pr.Dropped))
	fmt.Fprintf(&b, "%-30s %10s %9s %9s %9s %8s\n", l.Word("label"), l.Word("samples"), l.Word("req/s"), "p50 ms", "p95 ms", l.Word("err %"))
	rows := append([]engine.LabelProgress{}, pr.Labels...)
	if len(rows) > 12 {
		rows = rows[:12]
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "%-30s %10d %s %s %s %s\n", trunc(r.Label, 30), r.Count, n("%9.1f", r.RPS), n("%9.1f", r.P50Ms), n("%9.1f", r.P95Ms), n("%8.2f", r.ErrorPct))
	}
	fmt.Fprintf(&b, "%-30s %10d %s %s %s %s   %s\n", l.Word("all"), pr.Run.Count, n("%9.1f", pr.Run.RPS),
		n("%9.1f", pr.Run.P50Ms), n("%9.1f", pr.Run.P95Ms), n("%8.2f", pr.Run.ErrorPct), l.T("(last second: %.0f req/s, p95 %.1f ms)", pr.Second.RPS, pr.Second.P95Ms))
	p.lines = 3 + len(rows)
	if p.monitors != nil {
		for _, l := range p.monitors() {
			fmt.Fprintln(&b, trunc(l, 160))
			p.lines++
		}
	}
	io.WriteString(p.w, b.String())
}

func (p *progressPrinter) done() {}

// say prints a message at once, even with -q, below the panel: the panel
// is redrawn under it rather than over it.
func (p *progressPrinter) say(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, msg)
	p.lines = 0
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%02dm%02ds", m, s)
}
