// Package jvm monitors a HotSpot JVM's heap and garbage collection the way
// `jstat -gc` shows it, without an agent: it reads the JVM's performance
// data file (hsperfdata, the memory-mapped file jstat itself reads) directly,
// which costs a fraction of a millisecond per sample instead of a whole JVM
// per jstat call. When the file cannot be read it falls back to one
// long-running `jstat -gc -t <pid> <ms>` child and says so in the status.
package jvm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/process"
)

// Methods, as reported in the target status.
const (
	MethodHsperf = "hsperfdata"
	MethodJstat  = "jstat"
)

// Columns are the jstat -gc columns, in jstat's order. Capacities and usages
// are in KB (bytes/1024) and times in seconds, as jstat prints them. CGC and
// CGCT exist only for collectors with a concurrent phase (G1, ZGC,
// Shenandoah); with Parallel or Serial they are absent, where jstat prints
// "-".
var Columns = []string{"S0C", "S1C", "S0U", "S1U", "EC", "EU", "OC", "OU", "MC", "MU", "CCSC", "CCSU", "YGC", "YGCT", "FGC", "FGCT", "CGC", "CGCT", "GCT"}

// columnUnit is the unit of each jstat column.
func columnUnit(col string) string {
	switch col {
	case "YGC", "FGC", "CGC":
		return ""
	case "YGCT", "FGCT", "CGCT", "GCT":
		return "s"
	}
	return "KB"
}

// Kind is the JVM monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: Validate}
}

// Validate checks a jvm target: a pid, pid file or command-line pattern;
// Path may name the hsperfdata file explicitly.
func Validate(cfg monitor.TargetConfig) error {
	return process.ValidateSelector(cfg)
}

// perfReadyTimeout bounds the wait for a starting JVM's hsperfdata file to
// become readable before falling back to jstat.
const perfReadyTimeout = 3 * time.Second

// Config tunes a collector beyond the target configuration.
type Config struct {
	// ForceJstat skips the hsperfdata file (for tests and for JVMs whose
	// file plateau cannot read but jstat can).
	ForceJstat bool
	// Interval is the jstat sampling interval (the session interval).
	Interval time.Duration
}

// Collector samples one JVM.
type Collector struct {
	cfg    Config
	res    *process.Resolver
	cur    process.Ref
	method string
	path   string // hsperfdata file of cur
	buf    []byte
	ix     *perfIndex
	jstat  *jstatProc
	// jstatCPU is the CPU of jstat children that already exited.
	jstatCPU float64
	// why the file is not used, kept for the error if jstat fails too
	hsperfErr error

	havePrev bool
	prevGC   float64
	prevT    time.Time
	vals     map[string]float64
}

// Open finds the JVM and checks it can be read (file or jstat).
func Open(_ context.Context, cfg monitor.TargetConfig, env monitor.Env) (monitor.Collector, error) {
	return New(cfg, Config{Interval: env.Interval})
}

// New builds a collector for the JVM cfg designates.
func New(tc monitor.TargetConfig, cfg Config) (*Collector, error) {
	res, err := process.NewResolver("/proc", tc)
	if err != nil {
		return nil, err
	}
	if cfg.Interval <= 0 {
		cfg.Interval = monitor.DefaultInterval
	}
	c := &Collector{cfg: cfg, res: res, vals: map[string]float64{}}
	ref, err := res.Resolve()
	if err != nil {
		return nil, err
	}
	if err := c.attach(ref); err != nil {
		return nil, err
	}
	return c, nil
}

// Method implements monitor.MethodReporter.
func (c *Collector) Method() string { return c.method }

// Pid is the JVM followed now (0 while lost).
func (c *Collector) Pid() int { return c.cur.Pid }

// ChildCPUSeconds implements monitor.ChildCPUReporter: jstat's CPU.
func (c *Collector) ChildCPUSeconds() float64 {
	cpu := c.jstatCPU
	if c.jstat != nil {
		cpu += c.jstat.cpuSeconds()
	}
	return cpu
}

// attach starts reading ref: the hsperfdata file if it parses, else jstat.
func (c *Collector) attach(ref process.Ref) error {
	c.stopJstat()
	c.cur, c.ix, c.havePrev = ref, nil, false
	if !c.cfg.ForceJstat {
		path, err := FindPerfFile(ref.Pid)
		if err == nil {
			c.path = path
			// A JVM that is still starting has a file that is not yet
			// accessible or lacks the GC counters: give it a moment.
			for deadline := time.Now().Add(perfReadyTimeout); ; time.Sleep(50 * time.Millisecond) {
				if err = c.readFile(); err == nil {
					c.method = MethodHsperf
					return nil
				}
				if time.Now().After(deadline) || !c.res.Alive(ref) {
					break
				}
			}
		}
		c.hsperfErr = err
	} else {
		c.hsperfErr = errors.New("hsperfdata disabled")
	}
	j, err := startJstat(ref.Pid, c.cfg.Interval)
	if err != nil {
		c.cur = process.Ref{}
		return fmt.Errorf("jvm %d: hsperfdata: %v; jstat: %w", ref.Pid, c.hsperfErr, err)
	}
	c.jstat = j
	c.method = MethodJstat
	return nil
}

func (c *Collector) stopJstat() {
	if c.jstat != nil {
		c.jstatCPU += c.jstat.stop()
		c.jstat = nil
	}
}

// FindPerfFile locates the hsperfdata file of a host pid. The file is named
// after the pid inside the JVM's pid namespace and lives in the JVM's own
// /tmp, so it is looked up through /proc/<pid>/root (as jstat does), then
// in our /tmp for JVMs in the same mount namespace.
func FindPerfFile(pid int) (string, error) {
	nspid, err := process.NSPid("/proc", pid)
	if err != nil {
		return "", fmt.Errorf("namespace pid of %d: %w", pid, err)
	}
	pattern := []string{
		filepath.Join("/proc", strconv.Itoa(pid), "root", "tmp", "hsperfdata_*", strconv.Itoa(nspid)),
		filepath.Join(os.TempDir(), "hsperfdata_*", strconv.Itoa(pid)),
	}
	for _, p := range pattern {
		m, _ := filepath.Glob(p)
		for _, f := range m {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Size() >= prologueSize {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("no hsperfdata file for pid %d (namespace pid %d): started with -XX:-UsePerfData or -XX:+PerfDisableSharedMem?", pid, nspid)
}

// readFile reads the hsperfdata file and fills c.vals. The JVM updates the
// file in place without locking; a read that races with a structural change
// (entries appended) fails to index and is retried.
func (c *Collector) readFile() error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Millisecond)
		}
		c.buf, err = process.ReadFile(c.path, c.buf)
		if err != nil {
			return fmt.Errorf("reading %s: %w", c.path, err)
		}
		if len(c.buf) > maxPerfFileBytes {
			return fmt.Errorf("%s: %d bytes, too large for hsperfdata", c.path, len(c.buf))
		}
		var p prologue
		if p, err = parsePrologue(c.buf); err != nil {
			continue
		}
		if c.ix == nil || c.ix.numEntries != p.numEntries || c.ix.used != p.used {
			if c.ix, err = buildIndex(c.buf, p); err != nil {
				continue
			}
		}
		if err = c.fromFile(); err == nil {
			return nil
		}
	}
	return err
}

// fromFile computes the jstat -gc columns from counters, following the
// expressions of jstat's own option file (sun/tools/jstat/resources/
// jstat_options).
func (c *Collector) fromFile() error {
	b, ix := c.buf, c.ix
	freq, ok := ix.long(b, "sun.os.hrt.frequency")
	if !ok || freq <= 0 {
		return errors.New("hsperfdata: no sun.os.hrt.frequency")
	}
	clear(c.vals)
	kb := func(col, name string) {
		if v, ok := ix.long(b, name); ok {
			c.vals[col] = float64(v) / 1024
		}
	}
	kb("S0C", "sun.gc.generation.0.space.1.capacity")
	kb("S1C", "sun.gc.generation.0.space.2.capacity")
	kb("S0U", "sun.gc.generation.0.space.1.used")
	kb("S1U", "sun.gc.generation.0.space.2.used")
	kb("EC", "sun.gc.generation.0.space.0.capacity")
	kb("EU", "sun.gc.generation.0.space.0.used")
	kb("OC", "sun.gc.generation.1.space.0.capacity")
	kb("OU", "sun.gc.generation.1.space.0.used")
	kb("MC", "sun.gc.metaspace.capacity")
	kb("MU", "sun.gc.metaspace.used")
	kb("CCSC", "sun.gc.compressedclassspace.capacity")
	kb("CCSU", "sun.gc.compressedclassspace.used")
	gct, found := 0.0, 0
	for i, col := range [][2]string{{"YGC", "YGCT"}, {"FGC", "FGCT"}, {"CGC", "CGCT"}} {
		inv, ok1 := ix.long(b, "sun.gc.collector."+strconv.Itoa(i)+".invocations")
		ticks, ok2 := ix.long(b, "sun.gc.collector."+strconv.Itoa(i)+".time")
		if !ok1 || !ok2 {
			continue
		}
		found++
		c.vals[col[0]] = float64(inv)
		t := float64(ticks) / float64(freq)
		c.vals[col[1]] = t
		gct += t
	}
	if found == 0 {
		return errors.New("hsperfdata: no sun.gc.collector counters")
	}
	c.vals["GCT"] = gct
	if v, ok := ix.long(b, "java.threads.live"); ok {
		c.vals["threads_live"] = float64(v)
	}
	return nil
}

// Collect implements monitor.Collector.
func (c *Collector) Collect(_ context.Context, b *monitor.Batch) error {
	if c.cur.Pid == 0 || !c.res.Alive(c.cur) {
		lost := c.cur.Pid
		c.stopJstat()
		c.cur = process.Ref{}
		if !c.res.Follows() {
			return fmt.Errorf("jvm %d is gone", lost)
		}
		ref, err := c.res.Resolve()
		if err != nil {
			return err
		}
		if err := c.attach(ref); err != nil {
			return err
		}
	}
	switch c.method {
	case MethodHsperf:
		if err := c.readFile(); err != nil {
			return err
		}
	case MethodJstat:
		row, err := c.jstat.latest()
		if err != nil {
			// jstat died while the JVM lives: restart it at the next sample.
			c.stopJstat()
			c.cur = process.Ref{}
			return err
		}
		clear(c.vals)
		for k, v := range row {
			c.vals[k] = v
		}
	}
	for _, col := range Columns {
		if v, ok := c.vals[col]; ok {
			b.Add(col, columnUnit(col), v)
		}
	}
	v := c.vals
	b.Add("heap_used_bytes", "bytes", (v["S0U"]+v["S1U"]+v["EU"]+v["OU"])*1024)
	b.Add("heap_committed_bytes", "bytes", (v["S0C"]+v["S1C"]+v["EC"]+v["OC"])*1024)
	if t, ok := v["threads_live"]; ok {
		b.Add("threads_live", "", t)
	}
	// Young + full collection time per wall second: the share of time the
	// application was paused (concurrent cycle time, CGCT, runs beside it).
	gc := v["YGCT"] + v["FGCT"]
	if c.havePrev {
		if dt := b.Mono.Sub(c.prevT).Seconds(); dt > 0 {
			b.Add("gc_time_pct", "%", max(gc-c.prevGC, 0)/dt*100)
		}
	}
	c.havePrev, c.prevGC, c.prevT = true, gc, b.Mono
	return nil
}

// Close implements monitor.Collector.
func (c *Collector) Close() error {
	c.stopJstat()
	return nil
}
