package demo

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ListenPrefix starts the line a serving child prints on stdout once it
// listens; the rest of the line is its address. Children listen on port 0,
// so the demo never races another program for a port.
const ListenPrefix = "listening on "

// Options configures the demo stack.
type Options struct {
	Exe       string // the plateau binary, started with "demo serve …"
	Dir       string // where logs and the database go
	Instances int    // front and back instances (default 2)
	Workers   int    // concurrent requests per front behind the balancer (default 12)
	Patients  int    // patients in the database (default 50,000)
	Seed      int64
	Stderr    io.Writer // children's stderr (nil: discard)
}

// Proc is one running child process.
type Proc struct {
	Name string
	Addr string
	Cmd  *exec.Cmd
	Logs []string // log files it writes
	done chan struct{}
}

// Stack is the running system under test.
type Stack struct {
	Target string // the balancer's base URL, where the load goes
	Procs  []*Proc
}

// Start starts external services, backs, fronts and the balancer, waits until
// each answers /health, and returns the stack. On error everything started is
// stopped again.
func Start(ctx context.Context, o Options) (*Stack, error) {
	if o.Instances <= 0 {
		o.Instances = 2
	}
	if o.Workers <= 0 {
		o.Workers = 12
	}
	if o.Patients <= 0 {
		o.Patients = 50000
	}
	logs := filepath.Join(o.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, err
	}
	s := &Stack{}
	ok := false
	defer func() {
		if !ok {
			s.Stop()
		}
	}()
	secret := randomSecret()
	seed := strconv.FormatInt(o.Seed, 10)
	ext, err := s.start(ctx, o, "msb", []string{"external", "--access-log", filepath.Join(logs, "msb-access.log"), "--seed", seed},
		filepath.Join(logs, "msb-access.log"))
	if err != nil {
		return nil, err
	}
	db := filepath.Join(o.Dir, "cave.db")
	var backs []string
	for i := 1; i <= o.Instances; i++ {
		name := fmt.Sprintf("cave-%d", i)
		al := filepath.Join(logs, name+"-access.log")
		p, err := s.start(ctx, o, name, []string{"back", "--name", name, "--db", db, "--patients", strconv.Itoa(o.Patients),
			"--seed", seed, "--access-log", al}, al)
		if err != nil {
			return nil, err
		}
		backs = append(backs, "http://"+p.Addr)
	}
	var fronts []string
	for i := 1; i <= o.Instances; i++ {
		name := fmt.Sprintf("lar-%d", i)
		al, el := filepath.Join(logs, name+"-access.log"), filepath.Join(logs, name+"-sla.log")
		args := []string{"front", "--name", name, "--external", "http://" + ext.Addr, "--access-log", al, "--external-log", el}
		for _, b := range backs {
			args = append(args, "--back", b)
		}
		p, err := s.startEnv(ctx, o, name, args, []string{"PLATEAU_DEMO_SECRET=" + secret}, al, el)
		if err != nil {
			return nil, err
		}
		fronts = append(fronts, name+"=http://"+p.Addr)
	}
	args := []string{"lb", "--workers", strconv.Itoa(o.Workers)}
	for _, f := range fronts {
		args = append(args, "--backend", f)
	}
	lb, err := s.start(ctx, o, "lb", args)
	if err != nil {
		return nil, err
	}
	s.Target = "http://" + lb.Addr
	ok = true
	return s, nil
}

func randomSecret() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Stack) start(ctx context.Context, o Options, name string, args []string, logs ...string) (*Proc, error) {
	return s.startEnv(ctx, o, name, args, nil, logs...)
}

func (s *Stack) startEnv(ctx context.Context, o Options, name string, args, env []string, logs ...string) (*Proc, error) {
	return s.StartCommand(ctx, o.Exe, name, append([]string{"demo", "serve"}, args...), env, o.Stderr, logs...)
}

// StartCommand starts exe with args and "--listen 127.0.0.1:0" as a child
// of the stack, waits until it prints its address (ListenPrefix) and
// answers /health, and returns it. The study demos start their services
// with it ("demo serve-study …").
func (s *Stack) StartCommand(ctx context.Context, exe, name string, args, env []string, stderr io.Writer, logs ...string) (*Proc, error) {
	full := append(append([]string{}, args...), "--listen", "127.0.0.1:0")
	cmd := exec.Command(exe, full...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = childAttr()
	if stderr != nil {
		cmd.Stderr = stderr
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Proc{Name: name, Cmd: cmd, Logs: logs, done: make(chan struct{})}
	s.Procs = append(s.Procs, p)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if l := sc.Text(); !sent && strings.HasPrefix(l, ListenPrefix) {
				addr <- strings.TrimSpace(strings.TrimPrefix(l, ListenPrefix))
				sent = true
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	// The back generates its database on first start (a few seconds).
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	select {
	case p.Addr = <-addr:
	case <-p.done:
		return nil, fmt.Errorf("%s exited before listening (%v)", name, cmd.ProcessState)
	case <-timeout.C:
		return nil, fmt.Errorf("%s did not start within 60 s", name)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := waitHealthy(ctx, "http://"+p.Addr+"/health", p.done); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

func waitHealthy(ctx context.Context, url string, done <-chan struct{}) error {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return errors.New("not healthy after 30 s")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return errors.New("exited")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop ends every child: SIGTERM (they flush their logs), then SIGKILL
// after 5 s. It returns once all have exited.
func (s *Stack) Stop() {
	var wg sync.WaitGroup
	for i := len(s.Procs) - 1; i >= 0; i-- {
		p := s.Procs[i]
		if p.Cmd.Process == nil {
			continue
		}
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				_ = p.Cmd.Process.Kill()
				<-p.done
			}
		}()
	}
	wg.Wait()
}

// Pids lists the children's process ids by name.
func (s *Stack) Pids() map[string]int {
	m := map[string]int{}
	for _, p := range s.Procs {
		if p.Cmd.Process != nil {
			m[p.Name] = p.Cmd.Process.Pid
		}
	}
	return m
}
