package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/plateau-perf/plateau/internal/output/promtest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// liveChromium finds Debian's chromium; under CI=true a missing browser
// fails the test.
func liveChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found under CI; scripts/install-test-deps.sh installs it")
	}
	t.Skip("chromium not installed")
	return ""
}

// browser starts headless Chromium (no network beyond loopback: every host
// but 127.0.0.1 resolves nowhere).
func browser(t *testing.T) context.Context {
	t.Helper()
	// The profile is not a t.TempDir: Chromium's helper processes may still
	// write to it for a moment after the browser exits, and TempDir's cleanup
	// fails the test on a directory that is not empty yet.
	profile, err := os.MkdirTemp("", "plateau-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(liveChromium(t)), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(profile))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel2 := chromedp.NewContext(actx)
	tctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancel3()
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancel2()
		cancel()
		for i := 0; i < 50; i++ {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("chromium profile %s left behind", profile)
	})
	ctx = tctx
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.Text(sel, &s, chromedp.ByQuery)); err != nil {
		t.Fatalf("reading %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func intOf(t *testing.T, ctx context.Context, sel string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(textOf(t, ctx, sel), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return n
}

type runOutcome struct {
	code           int
	stdout, stderr string
}

func runAsync(args ...string) <-chan runOutcome {
	ch := make(chan runOutcome, 1)
	go func() {
		var o runOutcome
		o.code, o.stdout, o.stderr = runCLIPlain(args...)
		ch <- o
	}()
	return ch
}

// TestLiveViewInChromium opens the live view in headless Chromium while a
// run goes: the numbers on the page grow during the run, and at the end the
// page's totals and p95 equal summary.json.
func TestLiveViewInChromium(t *testing.T) {
	ctx := browser(t)
	addr := promtest.FreePort(t)
	planPath := outputsPlan(t, 6)
	out := filepath.Join(t.TempDir(), "run")
	done := runAsync("run", planPath, "-o", out, "-q", "--listen", addr)
	url := "http://" + addr + "/"
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := chromedp.Run(ctx, chromedp.Navigate(url)); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("live view never answered: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Wait for a first second with traffic, then for later ones.
	var first int64
	for first == 0 && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		first = intOf(t, ctx, "#total-count")
	}
	if first == 0 {
		t.Fatal("the page shows no requests after the run started")
	}
	firstElapsed := textOf(t, ctx, "#elapsed")
	// The phase is read while the page shows traffic: a loaded machine's
	// run could end during the wait below, and the page then shows none.
	phase := textOf(t, ctx, "#phase")
	time.Sleep(2500 * time.Millisecond)
	second := intOf(t, ctx, "#total-count")
	if second <= first {
		t.Errorf("request count did not grow during the run: %d then %d", first, second)
	}
	if e := textOf(t, ctx, "#elapsed"); e == firstElapsed {
		t.Errorf("elapsed did not change: %s", e)
	}
	if phase == "" || phase == "–" {
		t.Errorf("no phase shown during the run (%q beside %d requests)", phase, first)
	}
	if n := chromedpCount(t, ctx, "#charts svg"); n != 3 {
		t.Errorf("%d charts, want 3", n)
	}
	var o runOutcome
	select {
	case o = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("run did not end")
	}
	if o.code != ExitOK && o.code != ExitNotHeld {
		t.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
	}
	// The page got the final state and the verdict before plateau ended.
	status := textOf(t, ctx, "#status")
	sum := readSummary(t, out)
	if !strings.EqualFold(status, sum.Verdict) {
		t.Errorf("page status %q, summary.json verdict %q", status, sum.Verdict)
	}
	var total = sum.Labels[len(sum.Labels)-1]
	if total.Label != "TOTAL" {
		t.Fatalf("last summary label %q", total.Label)
	}
	if got := intOf(t, ctx, "#total-count"); got != total.Samples {
		t.Errorf("page requests %d, summary.json %d", got, total.Samples)
	}
	if got := intOf(t, ctx, "#total-errors"); got != total.Errors {
		t.Errorf("page errors %d, summary.json %d", got, total.Errors)
	}
	if got := textOf(t, ctx, "#total-p95"); got != fmt.Sprintf("%.1f", total.P95Ms) {
		t.Errorf("page p95 %s, summary.json %.3f", got, total.P95Ms)
	}
	// Each label row matches too.
	for _, l := range sum.Labels[:len(sum.Labels)-1] {
		var cells []string
		js := fmt.Sprintf(`[...document.querySelectorAll("#labels tr")].filter(r => r.cells[0].textContent === %q).map(r => [...r.cells].map(c => c.textContent))[0] || []`, l.Label)
		if err := chromedp.Run(ctx, chromedp.Evaluate(js, &cells)); err != nil {
			t.Fatal(err)
		}
		if len(cells) < 3 || cells[1] != strconv.FormatInt(l.Samples, 10) || cells[2] != strconv.FormatInt(l.Errors, 10) {
			t.Errorf("label %s: page row %v, summary.json %d samples %d errors", l.Label, cells, l.Samples, l.Errors)
		}
	}
}

func chromedpCount(t *testing.T, ctx context.Context, sel string) int {
	t.Helper()
	var n int
	if err := chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n)); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestLiveViewStopButton: the stop button asks for confirmation; declined,
// the run goes on; accepted, the run stops early, keeps its results and
// says why.
func TestLiveViewStopButton(t *testing.T) {
	ctx := browser(t)
	addr := promtest.FreePort(t)
	planPath := outputsPlan(t, 60)
	out := filepath.Join(t.TempDir(), "run")
	began := time.Now()
	done := runAsync("run", planPath, "-o", out, "-q", "--listen", addr)
	accept := make(chan bool, 4)
	chromedp.ListenTarget(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			a := <-accept
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(a))
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := chromedp.Run(ctx, chromedp.Navigate("http://"+addr+"/")); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("live view never answered: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for intOf(t, ctx, "#total-count") == 0 && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
	}
	accept <- false
	if err := chromedp.Run(ctx, chromedp.Click("#stop", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	select {
	case o := <-done:
		t.Fatalf("declined stop ended the run: %d %s", o.code, o.stderr)
	default:
	}
	accept <- true
	if err := chromedp.Run(ctx, chromedp.Click("#stop", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	var o runOutcome
	select {
	case o = <-done:
	case <-time.After(40 * time.Second):
		t.Fatal("stop from the live view did not end the run")
	}
	if time.Since(began) > 45*time.Second {
		t.Errorf("run took %v; the stop did not cut it short", time.Since(began))
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, o.stderr)
	}
	if info.Status != rundir.StatusInterrupted {
		t.Errorf("status %q, want interrupted", info.Status)
	}
	if !strings.Contains(strings.Join(info.Notes, "\n"), "stopped from the live view") {
		t.Errorf("notes do not say the live view stopped the run: %q", info.Notes)
	}
	if s := readSummary(t, out); s.Labels[len(s.Labels)-1].Samples == 0 {
		t.Error("the stopped run kept no results")
	}
}

// runCLIPlain is runCLI for a goroutine (no *testing.T).
func runCLIPlain(args ...string) (int, string, string) {
	var out, errb strings.Builder
	exe, _ := os.Executable()
	code := Main(context.Background(), State{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(string) (string, bool) { return "", false }, Exe: exe})
	return code, out.String(), errb.String()
}
