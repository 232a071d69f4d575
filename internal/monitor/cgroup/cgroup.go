// Package cgroup monitors a control group, which is how containers
// (docker, Kubernetes, ECS) and systemd services are watched: CPU use and
// throttling, memory current/working set/limit, block I/O, pids and
// pressure (PSI). It reads cgroup v2 files and falls back, resource by
// resource, to the v1 hierarchies, so hybrid hosts (v1 controllers plus a
// v2 tree at /sys/fs/cgroup/unified) work too.
package cgroup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/process"
)

// Mount is where cgroup file systems are mounted.
const Mount = "/sys/fs/cgroup"

// unlimited is the threshold above which a v1 memory limit means "none"
// (the kernel reports PAGE_COUNTER_MAX pages, about 2^63 bytes).
const unlimited = 1 << 62

// Kind is the cgroup monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: Validate}
}

// Validate checks a cgroup target: a path, or the pid of a process whose
// cgroup is watched.
func Validate(cfg monitor.TargetConfig) error {
	if (cfg.Path == "") == (cfg.Pid == 0) {
		return errors.New("exactly one of path or pid is required")
	}
	if cfg.Pid < 0 {
		return fmt.Errorf("pid %d is not positive", cfg.Pid)
	}
	return nil
}

// Dirs are the directories a cgroup's files live in: the v2 directory and,
// per v1 controller (cpu, cpuacct, memory, blkio, pids), the v1 directory.
// Empty entries are absent.
type Dirs struct {
	V2 string
	V1 map[string]string
}

// Resolve finds the directories of a cgroup given as a path (absolute under
// mount, or relative to the hierarchy roots) or as the pid of a member
// process. mount is normally Mount.
func Resolve(mount string, cfg monitor.TargetConfig) (Dirs, error) {
	if cfg.Pid != 0 {
		return resolvePid(mount, cfg.Pid)
	}
	p := filepath.Clean(cfg.Path)
	pureV2 := exists(filepath.Join(mount, "cgroup.controllers"))
	rel := p
	if r, err := filepath.Rel(mount, p); err == nil && !strings.HasPrefix(r, "..") && filepath.IsAbs(p) {
		rel = r
		if !pureV2 {
			// Strip the hierarchy the user picked ("unified", "memory",
			// "cpu,cpuacct") to get the path inside every hierarchy.
			if first, rest, _ := strings.Cut(rel, "/"); first != "" {
				rel = rest
			}
		}
	} else if filepath.IsAbs(p) {
		// A directory outside the mount (e.g. a copy): read it as it is.
		d := Dirs{V2: p, V1: map[string]string{}}
		for _, c := range v1Controllers {
			d.V1[c] = p
		}
		if !exists(p) {
			return Dirs{}, fmt.Errorf("no cgroup directory %s", p)
		}
		return d, nil
	}
	var d Dirs
	if pureV2 {
		d.V2 = filepath.Join(mount, rel)
	} else {
		d.V2 = filepath.Join(mount, "unified", rel)
		d.V1 = map[string]string{}
		for _, c := range v1Controllers {
			if dir := v1Dir(mount, c, rel); dir != "" {
				d.V1[c] = dir
			}
		}
	}
	if !exists(d.V2) {
		d.V2 = ""
	}
	if d.V2 == "" && len(d.V1) == 0 {
		return Dirs{}, fmt.Errorf("no cgroup %s under %s", rel, mount)
	}
	return d, nil
}

var v1Controllers = []string{"cpu", "cpuacct", "memory", "blkio", "pids"}

// v1Dir finds rel in the hierarchy of one v1 controller, which may be
// mounted alone or co-mounted ("cpu,cpuacct").
func v1Dir(mount, ctrl, rel string) string {
	cands := []string{ctrl}
	if ctrl == "cpu" || ctrl == "cpuacct" {
		cands = append(cands, "cpu,cpuacct", "cpuacct,cpu")
	}
	for _, h := range cands {
		if dir := filepath.Join(mount, h, rel); exists(dir) {
			return dir
		}
	}
	return ""
}

// resolvePid reads /proc/<pid>/cgroup: "0::/path" for v2 and
// "N:ctrl,ctrl:/path" per v1 hierarchy (paths may differ per controller).
func resolvePid(mount string, pid int) (Dirs, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return Dirs{}, fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	pureV2 := exists(filepath.Join(mount, "cgroup.controllers"))
	d := Dirs{V1: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		rel := strings.TrimPrefix(parts[2], "/")
		if parts[1] == "" {
			// On a hybrid host a process left in the v2 root has its real
			// cgroups in the v1 hierarchies; the v2 root would be the whole
			// machine.
			if pureV2 {
				d.V2 = filepath.Join(mount, rel)
			} else if dir := filepath.Join(mount, "unified", rel); rel != "" && exists(dir) {
				d.V2 = dir
			}
			continue
		}
		for _, ctrl := range strings.Split(parts[1], ",") {
			if dir := v1Dir(mount, ctrl, rel); dir != "" {
				d.V1[ctrl] = dir
			}
		}
	}
	if d.V2 == "" && len(d.V1) == 0 {
		return Dirs{}, fmt.Errorf("no readable cgroup for pid %d", pid)
	}
	return d, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Collector samples one cgroup. Each resource is read from the first
// source that has it: the v2 file, else the v1 one.
type Collector struct {
	d   Dirs
	buf []byte

	// files chosen at open; "" = not available
	cpuV2, cpuacctUsage, cpuacctStat, cpuV1Stat string
	memCur, memMax, memStat                     string
	memV1                                       bool
	ioV2, ioV1                                  string
	pids                                        string
	pressure                                    [3]string

	havePrev bool
	prev     counters
	prevT    time.Time
}

// counters are the cumulative values rates are computed from.
type counters struct {
	usageUsec, userUsec, systemUsec   float64
	periods, throttled, throttledUsec float64
	hasThrottle                       bool
	readBytes, writeBytes             float64
	hasIO                             bool
	pressureUsec                      [3]float64
	hasPressure                       [3]bool
	userFromTicks                     bool
}

// Open resolves the cgroup and checks at least one of its files is readable.
func Open(_ context.Context, cfg monitor.TargetConfig, _ monitor.Env) (monitor.Collector, error) {
	d, err := Resolve(Mount, cfg)
	if err != nil {
		return nil, err
	}
	return New(d)
}

// New builds a collector over resolved directories.
func New(d Dirs) (*Collector, error) {
	c := &Collector{d: d}
	pick := func(dir, name string) string {
		if dir == "" {
			return ""
		}
		p := filepath.Join(dir, name)
		if exists(p) {
			return p
		}
		return ""
	}
	if p := pick(d.V2, "cpu.stat"); p != "" && fileHas(p, "usage_usec") {
		c.cpuV2 = p
	} else {
		c.cpuacctUsage = pick(d.V1["cpuacct"], "cpuacct.usage")
		c.cpuacctStat = pick(d.V1["cpuacct"], "cpuacct.stat")
		c.cpuV1Stat = pick(d.V1["cpu"], "cpu.stat")
	}
	if p := pick(d.V2, "memory.current"); p != "" {
		c.memCur, c.memMax, c.memStat = p, pick(d.V2, "memory.max"), pick(d.V2, "memory.stat")
	} else if p := pick(d.V1["memory"], "memory.usage_in_bytes"); p != "" {
		c.memV1 = true
		c.memCur, c.memMax, c.memStat = p, pick(d.V1["memory"], "memory.limit_in_bytes"), pick(d.V1["memory"], "memory.stat")
	}
	if c.ioV2 = pick(d.V2, "io.stat"); c.ioV2 == "" {
		c.ioV1 = pick(d.V1["blkio"], "blkio.throttle.io_service_bytes_recursive")
		if c.ioV1 == "" {
			c.ioV1 = pick(d.V1["blkio"], "blkio.throttle.io_service_bytes")
		}
	}
	if c.pids = pick(d.V2, "pids.current"); c.pids == "" {
		c.pids = pick(d.V1["pids"], "pids.current")
	}
	for i, r := range pressureResources {
		c.pressure[i] = pick(d.V2, r+".pressure")
	}
	if c.cpuV2 == "" && c.cpuacctUsage == "" && c.memCur == "" && c.ioV2 == "" && c.ioV1 == "" {
		return nil, fmt.Errorf("cgroup %s: no cpu, memory or io files", c.describe())
	}
	return c, nil
}

var pressureResources = [3]string{"cpu", "memory", "io"}

// Sources says which files are read, for tests and the docs' examples.
func (c *Collector) Sources() []string {
	var out []string
	for _, s := range []string{c.cpuV2, c.cpuacctUsage, c.cpuacctStat, c.cpuV1Stat, c.memCur, c.memMax, c.memStat, c.ioV2, c.ioV1, c.pids} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (c *Collector) describe() string {
	if c.d.V2 != "" {
		return c.d.V2
	}
	for _, k := range v1Controllers {
		if c.d.V1[k] != "" {
			return c.d.V1[k]
		}
	}
	return "?"
}

func fileHas(path, key string) bool {
	b, err := os.ReadFile(path)
	return err == nil && bytes.Contains(b, []byte(key))
}

// Collect implements monitor.Collector. The target is lost when none of
// its CPU, memory or I/O files can be read (the cgroup was removed, e.g. a
// container restarted).
func (c *Collector) Collect(_ context.Context, b *monitor.Batch) error {
	var cur counters
	read := 0
	var firstErr error
	note := func(err error) bool {
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return false
		}
		read++
		return true
	}
	cpuOK := false
	if c.cpuV2 != "" {
		cpuOK = note(c.readCPUV2(&cur))
	} else if c.cpuacctUsage != "" {
		cpuOK = note(c.readCPUV1(&cur))
	}
	var mem memValues
	memOK := c.memCur != "" && note(c.readMemory(&mem))
	if c.ioV2 != "" || c.ioV1 != "" {
		note(c.readIO(&cur))
	}
	if read == 0 {
		c.havePrev = false
		if firstErr == nil {
			firstErr = errors.New("nothing readable")
		}
		return fmt.Errorf("cgroup %s: %w", c.describe(), firstErr)
	}
	for i, p := range c.pressure {
		if p == "" {
			continue
		}
		var err error
		if c.buf, err = process.ReadFile(p, c.buf); err == nil {
			if v, ok := pressureTotal(c.buf); ok {
				cur.pressureUsec[i], cur.hasPressure[i] = v, true
			}
		}
	}

	now := b.Mono
	dt := now.Sub(c.prevT).Seconds()
	if c.havePrev && dt > 0 {
		p := c.prev
		if cpuOK {
			b.Add("cpu_pct", "%", rate(cur.usageUsec, p.usageUsec, dt)/1e6*100)
			if cur.userFromTicks || c.cpuV2 != "" {
				b.Add("cpu_user_pct", "%", rate(cur.userUsec, p.userUsec, dt)/1e6*100)
				b.Add("cpu_system_pct", "%", rate(cur.systemUsec, p.systemUsec, dt)/1e6*100)
			}
			if cur.hasThrottle && p.hasThrottle {
				if dp := cur.periods - p.periods; dp > 0 {
					b.Add("cpu_throttled_pct", "%", max(cur.throttled-p.throttled, 0)/dp*100)
				} else {
					b.Add("cpu_throttled_pct", "%", 0)
				}
			}
		}
		if cur.hasIO && p.hasIO {
			b.Add("io_read_bytes_per_s", "bytes/s", rate(cur.readBytes, p.readBytes, dt))
			b.Add("io_write_bytes_per_s", "bytes/s", rate(cur.writeBytes, p.writeBytes, dt))
		}
		for i, r := range pressureResources {
			if cur.hasPressure[i] && p.hasPressure[i] {
				b.Add(r+"_pressure_pct", "%", rate(cur.pressureUsec[i], p.pressureUsec[i], dt)/1e6*100)
			}
		}
	}
	if cpuOK && cur.hasThrottle {
		b.Add("nr_throttled", "", cur.throttled)
	}
	if memOK {
		b.Add("memory_bytes", "bytes", mem.current)
		if mem.hasStat {
			b.Add("memory_working_set_bytes", "bytes", max(mem.current-mem.inactiveFile, 0))
			b.Add("memory_anon_bytes", "bytes", mem.anon)
			b.Add("memory_file_bytes", "bytes", mem.file)
		}
		if mem.limit > 0 {
			b.Add("memory_limit_bytes", "bytes", mem.limit)
		}
	}
	if c.pids != "" {
		var err error
		if c.buf, err = process.ReadFile(c.pids, c.buf); err == nil {
			if v, err := strconv.ParseFloat(string(bytes.TrimSpace(c.buf)), 64); err == nil {
				b.Add("pids", "", v)
			}
		}
	}
	c.prev, c.prevT, c.havePrev = cur, now, true
	return nil
}

func rate(cur, prev, dt float64) float64 {
	if cur < prev {
		return 0 // counter reset (cgroup re-created)
	}
	return (cur - prev) / dt
}

func (c *Collector) readCPUV2(cur *counters) error {
	var err error
	if c.buf, err = process.ReadFile(c.cpuV2, c.buf); err != nil {
		return err
	}
	kv := keyValues(c.buf)
	u, ok := kv["usage_usec"]
	if !ok {
		return fmt.Errorf("%s: no usage_usec", c.cpuV2)
	}
	cur.usageUsec, cur.userUsec, cur.systemUsec = u, kv["user_usec"], kv["system_usec"]
	if periods, ok := kv["nr_periods"]; ok {
		cur.periods, cur.throttled, cur.throttledUsec, cur.hasThrottle = periods, kv["nr_throttled"], kv["throttled_usec"], true
	}
	return nil
}

func (c *Collector) readCPUV1(cur *counters) error {
	var err error
	if c.buf, err = process.ReadFile(c.cpuacctUsage, c.buf); err != nil {
		return err
	}
	ns, err := strconv.ParseFloat(string(bytes.TrimSpace(c.buf)), 64)
	if err != nil {
		return fmt.Errorf("%s: %w", c.cpuacctUsage, err)
	}
	cur.usageUsec = ns / 1e3
	if c.cpuacctStat != "" {
		if c.buf, err = process.ReadFile(c.cpuacctStat, c.buf); err == nil {
			kv := keyValues(c.buf)
			// cpuacct.stat is in USER_HZ ticks.
			cur.userUsec = kv["user"] * 1e6 / process.TicksPerSecond
			cur.systemUsec = kv["system"] * 1e6 / process.TicksPerSecond
			cur.userFromTicks = true
		}
	}
	if c.cpuV1Stat != "" {
		if c.buf, err = process.ReadFile(c.cpuV1Stat, c.buf); err == nil {
			kv := keyValues(c.buf)
			if periods, ok := kv["nr_periods"]; ok {
				cur.periods, cur.throttled, cur.throttledUsec, cur.hasThrottle = periods, kv["nr_throttled"], kv["throttled_time"]/1e3, true
			}
		}
	}
	return nil
}

type memValues struct {
	current, limit           float64
	inactiveFile, anon, file float64
	hasStat                  bool
}

func (c *Collector) readMemory(m *memValues) error {
	var err error
	if c.buf, err = process.ReadFile(c.memCur, c.buf); err != nil {
		return err
	}
	if m.current, err = strconv.ParseFloat(string(bytes.TrimSpace(c.buf)), 64); err != nil {
		return fmt.Errorf("%s: %w", c.memCur, err)
	}
	if c.memMax != "" {
		if c.buf, err = process.ReadFile(c.memMax, c.buf); err == nil {
			// v2 writes "max" for no limit; v1 a huge number.
			if v, err := strconv.ParseFloat(string(bytes.TrimSpace(c.buf)), 64); err == nil && v < unlimited {
				m.limit = v
			}
		}
	}
	if c.memStat != "" {
		if c.buf, err = process.ReadFile(c.memStat, c.buf); err == nil {
			kv := keyValues(c.buf)
			m.hasStat = true
			if c.memV1 {
				m.inactiveFile, m.anon, m.file = kv["total_inactive_file"], kv["total_rss"], kv["total_cache"]
			} else {
				m.inactiveFile, m.anon, m.file = kv["inactive_file"], kv["anon"], kv["file"]
			}
		}
	}
	return nil
}

func (c *Collector) readIO(cur *counters) error {
	var err error
	if c.ioV2 != "" {
		if c.buf, err = process.ReadFile(c.ioV2, c.buf); err != nil {
			return err
		}
		// "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0" per device.
		for _, line := range bytes.Split(c.buf, []byte("\n")) {
			for _, f := range bytes.Fields(line) {
				k, v, ok := bytes.Cut(f, []byte("="))
				if !ok {
					continue
				}
				switch string(k) {
				case "rbytes":
					cur.readBytes += parseF(v)
				case "wbytes":
					cur.writeBytes += parseF(v)
				}
			}
		}
		cur.hasIO = true
		return nil
	}
	if c.buf, err = process.ReadFile(c.ioV1, c.buf); err != nil {
		return err
	}
	// "8:0 Read 123" … "Total 456".
	for _, line := range bytes.Split(c.buf, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) != 3 {
			continue
		}
		switch string(f[1]) {
		case "Read":
			cur.readBytes += parseF(f[2])
		case "Write":
			cur.writeBytes += parseF(f[2])
		}
	}
	cur.hasIO = true
	return nil
}

// pressureTotal returns the "some" total stall time in µs from a PSI file.
func pressureTotal(b []byte) (float64, bool) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("some ")) {
			continue
		}
		for _, f := range bytes.Fields(line) {
			if v, ok := bytes.CutPrefix(f, []byte("total=")); ok {
				return parseF(v), true
			}
		}
	}
	return 0, false
}

// keyValues parses "key value" lines (cpu.stat, memory.stat, cpuacct.stat).
func keyValues(b []byte) map[string]float64 {
	out := map[string]float64{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) == 2 {
			out[string(f[0])] = parseF(f[1])
		}
	}
	return out
}

func parseF(b []byte) float64 {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0
	}
	return v
}

// Close implements monitor.Collector.
func (c *Collector) Close() error { return nil }
