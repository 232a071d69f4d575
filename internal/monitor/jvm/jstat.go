package jvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor/process"
)

// jstatStartTimeout bounds the wait for jstat's first row (it starts a JVM
// of its own, which takes about half a second on an idle machine).
const jstatStartTimeout = 15 * time.Second

// jstatProc is one long-running `jstat -gc -t <pid> <ms>` child; a reader
// goroutine keeps its latest row.
type jstatProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer

	mu   sync.Mutex
	row  map[string]float64
	rows int
	err  error // set once jstat has exited
	done chan struct{}
}

// JstatPath finds the jstat of the JVM being watched (same JDK version)
// next to its java executable, else the one on PATH.
func JstatPath(pid int) (string, error) {
	if exe, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil {
		// The exe link names a path in the JVM's mount namespace; reach it
		// through the JVM's root.
		p := filepath.Join("/proc", strconv.Itoa(pid), "root", filepath.Dir(exe), "jstat")
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath("jstat")
}

func startJstat(pid int, interval time.Duration) (*jstatProc, error) {
	bin, err := JstatPath(pid)
	if err != nil {
		return nil, fmt.Errorf("no jstat: %w", err)
	}
	ms := max(interval.Milliseconds(), 1)
	// An English locale so numbers use '.' decimals.
	cmd := exec.Command(bin, "-J-Duser.language=en", "-J-Duser.country=US", "-gc", "-t", strconv.Itoa(pid), strconv.FormatInt(ms, 10))
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	j := &jstatProc{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &j.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("jstat: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting jstat: %w", err)
	}
	go j.read(bufio.NewScanner(out))
	deadline := time.NewTimer(jstatStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-j.done:
			j.stop()
			return nil, j.exitErr()
		case <-deadline.C:
			j.stop()
			return nil, fmt.Errorf("jstat printed no row within %s", jstatStartTimeout)
		case <-tick.C:
			j.mu.Lock()
			n := j.rows
			j.mu.Unlock()
			if n > 0 {
				return j, nil
			}
		}
	}
}

// read parses jstat's output: one header line of column names, then rows.
func (j *jstatProc) read(sc *bufio.Scanner) {
	defer close(j.done)
	var header []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if header == nil || f[0] == "Timestamp" {
			header = f
			continue
		}
		row, err := ParseJstatRow(header, f)
		if err != nil {
			continue
		}
		j.mu.Lock()
		j.row = row
		j.rows++
		j.mu.Unlock()
	}
	err := j.cmd.Wait()
	j.mu.Lock()
	if err == nil {
		err = errors.New("exited")
	}
	j.err = err
	j.mu.Unlock()
}

// ParseJstatRow maps one jstat data line onto its header. "-" (a column
// the collector does not have) is left out; Timestamp is skipped.
func ParseJstatRow(header, fields []string) (map[string]float64, error) {
	if len(fields) != len(header) {
		return nil, fmt.Errorf("jstat row has %d fields, header %d", len(fields), len(header))
	}
	row := make(map[string]float64, len(header))
	for i, h := range header {
		if h == "Timestamp" || fields[i] == "-" {
			continue
		}
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return nil, fmt.Errorf("jstat column %s: %w", h, err)
		}
		row[h] = v
	}
	return row, nil
}

// latest returns a copy of the newest row, or why jstat stopped.
func (j *jstatProc) latest() (map[string]float64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return nil, j.exitErrLocked()
	}
	out := make(map[string]float64, len(j.row))
	for k, v := range j.row {
		out[k] = v
	}
	return out, nil
}

func (j *jstatProc) exitErr() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.exitErrLocked()
}

func (j *jstatProc) exitErrLocked() error {
	msg := strings.TrimSpace(j.stderr.String())
	if msg == "" {
		return fmt.Errorf("jstat: %v", j.err)
	}
	return fmt.Errorf("jstat: %v: %s", j.err, firstLine(msg))
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cpuSeconds is jstat's CPU so far (its whole JVM, all threads).
func (j *jstatProc) cpuSeconds() float64 {
	select {
	case <-j.done:
		if ps := j.cmd.ProcessState; ps != nil {
			return (ps.UserTime() + ps.SystemTime()).Seconds()
		}
		return 0
	default:
	}
	st, _, err := process.ReadStat("/proc", j.cmd.Process.Pid, nil)
	if err != nil {
		return 0
	}
	return float64(st.UTime+st.STime+st.CUTime+st.CSTime) / process.TicksPerSecond
}

// stop kills jstat, waits for it and returns the CPU it used.
func (j *jstatProc) stop() float64 {
	_ = j.cmd.Process.Kill()
	<-j.done
	return j.cpuSeconds()
}
