// Package process monitors one process (optionally with its whole process
// tree) from /proc: CPU, resident memory, threads, open files and storage
// I/O. The process is designated by pid, pid file or a command-line pattern;
// pid files and patterns are re-resolved when the process goes away, so a
// restarted service is followed, and pid reuse is caught by comparing start
// times.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// pidFileRecheck is how often a pid file is re-read while its process is
// alive, to follow a service that was replaced without the old pid dying
// first (a graceful reload).
const pidFileRecheck = 5 * time.Second

// Kind is the process monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: ValidateSelector}
}

// Collector samples one process or process tree.
type Collector struct {
	root     string
	res      *Resolver
	children bool
	pageSize float64

	cur        Ref
	resolvedAt time.Time
	restarts   int

	// previous counters for rates; valid when havePrev
	havePrev            bool
	prevT               time.Time
	prevUser, prevSys   uint64
	prevRead, prevWrite uint64
	prevIOOK            bool

	buf   []byte
	pids  []int
	queue []int
}

// Open resolves the process now; a target that designates no process cannot
// start.
func Open(_ context.Context, cfg monitor.TargetConfig, _ monitor.Env) (monitor.Collector, error) {
	return New("/proc", cfg)
}

// New is Open with a chosen proc root.
func New(root string, cfg monitor.TargetConfig) (*Collector, error) {
	res, err := NewResolver(root, cfg)
	if err != nil {
		return nil, err
	}
	ref, err := res.Resolve()
	if err != nil {
		return nil, err
	}
	return &Collector{
		root: root, res: res, children: cfg.Children,
		pageSize: float64(os.Getpagesize()),
		cur:      ref, resolvedAt: time.Now(),
	}, nil
}

// Pid returns the pid currently followed (0 when lost).
func (c *Collector) Pid() int { return c.cur.Pid }

// Collect implements monitor.Collector.
func (c *Collector) Collect(_ context.Context, b *monitor.Batch) error {
	// Two attempts: when the process is gone, a successor found at once (a
	// restart between two samples) costs no sample.
	for attempt := 0; ; attempt++ {
		if err := c.follow(b.Mono); err != nil {
			return err
		}
		if c.sample(b) {
			return nil
		}
		lost := c.cur.Pid
		c.cur = Ref{}
		c.havePrev = false
		if attempt == 1 || !c.res.Follows() {
			return fmt.Errorf("process %d exited", lost)
		}
	}
}

// sample reads the process (tree) into b; false means the process is gone
// and nothing was added.
func (c *Collector) sample(b *monitor.Batch) bool {
	var (
		user, sys   uint64
		rss         int64
		threads     int64
		fds         int
		fdsOK       = true
		rd, wr      uint64
		ioOK        = true
		nprocs      int
		st          Stat
		err         error
		rootMissing bool
	)
	c.pids = append(c.pids[:0], c.cur.Pid)
	if c.children {
		c.pids = c.tree(c.cur.Pid)
	}
	for i, pid := range c.pids {
		st, c.buf, err = ReadStat(c.root, pid, c.buf)
		if err != nil || (i == 0 && (st.StartTime != c.cur.StartTime || st.State == 'Z' || st.State == 'X')) {
			if i == 0 {
				rootMissing = true
				break
			}
			continue // a child exited between listing and reading
		}
		nprocs++
		user += st.UTime
		sys += st.STime
		if c.children {
			// Reaped children's times move into their parent's cutime and
			// cstime, so summing them keeps the tree total continuous when a
			// worker exits (see docs/monitoring.md).
			user += st.CUTime
			sys += st.CSTime
		}
		rss += st.RSSPages
		threads += st.Threads
		if n, err := CountFDs(c.root, pid); err == nil {
			fds += n
		} else {
			fdsOK = false
		}
		var pio IO
		c.buf, err = ReadFile(c.root+"/"+strconv.Itoa(pid)+"/io", c.buf)
		if err == nil {
			pio, err = ParseIO(c.buf)
		}
		if err == nil {
			rd += pio.ReadBytes
			wr += pio.WriteBytes
		} else {
			ioOK = false
		}
	}
	if rootMissing {
		return false
	}

	now := b.Mono
	if c.havePrev {
		dt := now.Sub(c.prevT).Seconds()
		if dt > 0 {
			du := float64(sub(user, c.prevUser)) / TicksPerSecond
			ds := float64(sub(sys, c.prevSys)) / TicksPerSecond
			b.Add("cpu_pct", "%", (du+ds)/dt*100)
			b.Add("cpu_user_pct", "%", du/dt*100)
			b.Add("cpu_system_pct", "%", ds/dt*100)
			if ioOK && c.prevIOOK {
				b.Add("io_read_bytes_per_s", "bytes/s", float64(sub(rd, c.prevRead))/dt)
				b.Add("io_write_bytes_per_s", "bytes/s", float64(sub(wr, c.prevWrite))/dt)
			}
		}
	}
	b.Add("rss_bytes", "bytes", float64(rss)*c.pageSize)
	b.Add("threads", "", float64(threads))
	if fdsOK {
		b.Add("open_fds", "", float64(fds))
	}
	b.Add("processes", "", float64(nprocs))
	b.Add("restarts", "", float64(c.restarts))
	c.havePrev, c.prevT = true, now
	c.prevUser, c.prevSys = user, sys
	c.prevRead, c.prevWrite, c.prevIOOK = rd, wr, ioOK
	return true
}

// follow makes sure c.cur designates a live process, re-resolving when it
// is lost or, for a pid file, every pidFileRecheck.
func (c *Collector) follow(now time.Time) error {
	if c.cur.Pid != 0 && c.res.PidFile() && now.Sub(c.resolvedAt) >= pidFileRecheck {
		if ref, err := c.res.Resolve(); err == nil && ref != c.cur {
			c.switchTo(ref, now)
		}
		c.resolvedAt = now
	}
	if c.cur.Pid != 0 {
		return nil
	}
	if !c.res.Follows() {
		return fmt.Errorf("%s is gone", c.res)
	}
	ref, err := c.res.Resolve()
	if err != nil {
		return err
	}
	c.switchTo(ref, now)
	return nil
}

func (c *Collector) switchTo(ref Ref, now time.Time) {
	c.cur = ref
	c.resolvedAt = now
	c.restarts++
	c.havePrev = false
}

// tree lists root and all its descendants, breadth first.
func (c *Collector) tree(root int) []int {
	out := append(c.pids[:0], root)
	seen := 0
	for seen < len(out) && len(out) < 10000 {
		var err error
		out, c.buf, err = Children(c.root, out[seen], c.buf, out)
		if err != nil && seen == 0 && errors.Is(err, os.ErrNotExist) {
			break
		}
		seen++
	}
	return out
}

// Close implements monitor.Collector.
func (c *Collector) Close() error { return nil }

// sub is a counter delta that never goes negative: a tree member that was
// re-parented away takes its time with it.
func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}
