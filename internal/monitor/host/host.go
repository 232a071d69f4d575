// Package host monitors the machine plateau runs on (or, with a proc root
// such as /host/proc, the host of a container) from /proc: CPU split the way
// vmstat shows it, load, memory, swap, network per interface and disk per
// device. Counters become per-second rates between samples; the files are
// parsed by hand into reused buffers because this monitor runs every second
// for the whole test and should cost next to nothing.
package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/process"
)

// Kind is the host monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: Validate}
}

// Validate checks a host target: only Path (the proc root) applies.
func Validate(cfg monitor.TargetConfig) error {
	if cfg.Path != "" && !filepath.IsAbs(cfg.Path) {
		return fmt.Errorf("path %q: the proc root must be absolute", cfg.Path)
	}
	if cfg.Pid != 0 || cfg.PidFile != "" || cfg.Match != "" || cfg.DSN != "" || cfg.URL != "" {
		return fmt.Errorf("only path (the proc root) applies to a host target")
	}
	return nil
}

// cpuTimes are the aggregate "cpu" line of /proc/stat, in ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// ioCounters are one interface's or device's cumulative counters.
type ioCounters struct {
	rxBytes, txBytes, rxPackets, txPackets uint64
}

// names are the per-interface or per-device metric names, built once.
type names struct {
	rxBytes, txBytes, rxOps, txOps string
	physical                       bool // counted in the totals
}

// Collector samples the host.
type Collector struct {
	root   string
	sysfs  string // "/sys" when root is the live /proc, else ""
	buf    []byte
	disks  map[string]bool // whole disks (from /sys/block); nil = heuristic
	ifaces map[string]*names
	devs   map[string]*names

	havePrev bool
	prevT    time.Time
	prevCPU  cpuTimes
	prevCtx  uint64
	prevIntr uint64
	prevNet  map[string]ioCounters
	prevDisk map[string]ioCounters
	curNet   map[string]ioCounters
	curDisk  map[string]ioCounters
}

// Open checks that the proc root is readable.
func Open(_ context.Context, cfg monitor.TargetConfig, _ monitor.Env) (monitor.Collector, error) {
	return New(cfg.Path)
}

// New returns a collector reading root ("" means /proc).
func New(root string) (*Collector, error) {
	if root == "" {
		root = "/proc"
	}
	root = strings.TrimRight(root, "/")
	c := &Collector{
		root: root, ifaces: map[string]*names{}, devs: map[string]*names{},
		prevNet: map[string]ioCounters{}, prevDisk: map[string]ioCounters{},
		curNet: map[string]ioCounters{}, curDisk: map[string]ioCounters{},
	}
	if _, err := os.Stat(root + "/stat"); err != nil {
		return nil, fmt.Errorf("proc root: %w", err)
	}
	if root == "/proc" {
		c.sysfs = "/sys"
		c.loadDisks()
	}
	return c, nil
}

// loadDisks lists whole disks: /sys/block has no partitions.
func (c *Collector) loadDisks() {
	ents, err := os.ReadDir(c.sysfs + "/block")
	if err != nil {
		return
	}
	c.disks = map[string]bool{}
	for _, e := range ents {
		c.disks[e.Name()] = true
	}
}

// Collect implements monitor.Collector.
func (c *Collector) Collect(_ context.Context, b *monitor.Batch) error {
	now := b.Mono
	var err error
	c.buf, err = process.ReadFile(c.root+"/stat", c.buf)
	if err != nil {
		return fmt.Errorf("reading stat: %w", err)
	}
	st, err := parseStat(c.buf)
	if err != nil {
		return err
	}
	dt := now.Sub(c.prevT).Seconds()
	rates := c.havePrev && dt > 0

	b.Add("cpus", "", float64(st.cpus))
	if rates {
		cur, prev := st.cpu, c.prevCPU
		if tot := float64(sub(cur.total(), prev.total())); tot > 0 {
			pct := func(a, b uint64) float64 { return float64(sub(a, b)) / tot * 100 }
			user := pct(cur.user+cur.nice, prev.user+prev.nice)
			system := pct(cur.system+cur.irq+cur.softirq, prev.system+prev.irq+prev.softirq)
			idle := pct(cur.idle, prev.idle)
			iowait := pct(cur.iowait, prev.iowait)
			b.Add("cpu_user_pct", "%", user)
			b.Add("cpu_system_pct", "%", system)
			b.Add("cpu_idle_pct", "%", idle)
			b.Add("cpu_iowait_pct", "%", iowait)
			b.Add("cpu_steal_pct", "%", pct(cur.steal, prev.steal))
			b.Add("cpu_busy_pct", "%", 100-idle-iowait)
		}
		b.Add("ctx_switches_per_s", "1/s", float64(sub(st.ctxt, c.prevCtx))/dt)
		b.Add("interrupts_per_s", "1/s", float64(sub(st.intr, c.prevIntr))/dt)
	}
	b.Add("procs_running", "", float64(st.running))
	b.Add("procs_blocked", "", float64(st.blocked))
	c.prevCPU, c.prevCtx, c.prevIntr = st.cpu, st.ctxt, st.intr

	if c.buf, err = process.ReadFile(c.root+"/loadavg", c.buf); err == nil {
		f := bytes.Fields(c.buf)
		if len(f) >= 3 {
			b.Add("load1", "", parseFloat(f[0]))
			b.Add("load5", "", parseFloat(f[1]))
			b.Add("load15", "", parseFloat(f[2]))
		}
	}

	if c.buf, err = process.ReadFile(c.root+"/meminfo", c.buf); err != nil {
		return fmt.Errorf("reading meminfo: %w", err)
	}
	m := parseMeminfo(c.buf)
	b.Add("mem_total_bytes", "bytes", float64(m.total))
	b.Add("mem_used_bytes", "bytes", float64(sub(m.total, m.available)))
	b.Add("mem_available_bytes", "bytes", float64(m.available))
	b.Add("mem_free_bytes", "bytes", float64(m.free))
	b.Add("mem_cached_bytes", "bytes", float64(m.cached+m.sreclaimable))
	b.Add("mem_buffers_bytes", "bytes", float64(m.buffers))
	b.Add("swap_used_bytes", "bytes", float64(sub(m.swapTotal, m.swapFree)))

	if c.buf, err = process.ReadFile(c.root+"/net/dev", c.buf); err == nil {
		clear(c.curNet)
		parseNetDev(c.buf, c.curNet)
		c.addIO(b, rates, dt, c.curNet, c.prevNet, c.ifaces, ifaceNames,
			[4]string{"net_rx_bytes_per_s", "net_tx_bytes_per_s", "net_rx_packets_per_s", "net_tx_packets_per_s"},
			[4]string{"bytes/s", "bytes/s", "1/s", "1/s"})
		c.prevNet, c.curNet = c.curNet, c.prevNet
	}
	if c.buf, err = process.ReadFile(c.root+"/diskstats", c.buf); err == nil {
		clear(c.curDisk)
		parseDiskstats(c.buf, c.curDisk, c.disks)
		c.addIO(b, rates, dt, c.curDisk, c.prevDisk, c.devs, c.devNames,
			[4]string{"disk_read_bytes_per_s", "disk_write_bytes_per_s", "disk_reads_per_s", "disk_writes_per_s"},
			[4]string{"bytes/s", "bytes/s", "1/s", "1/s"})
		c.prevDisk, c.curDisk = c.curDisk, c.prevDisk
	}
	c.havePrev, c.prevT = true, now
	return nil
}

// addIO emits the totals over physical entries, then every entry with its
// own label, in a stable (sorted) order.
func (c *Collector) addIO(b *monitor.Batch, rates bool, dt float64, cur, prev map[string]ioCounters,
	cache map[string]*names, mk func(string) *names, total [4]string, units [4]string) {
	if !rates {
		return
	}
	keys := make([]string, 0, len(cur))
	for k := range cur {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var sum [4]float64
	type row struct {
		n *names
		v [4]float64
	}
	rows := make([]row, 0, len(keys))
	for _, k := range keys {
		p, ok := prev[k]
		if !ok {
			continue // appeared since the last sample
		}
		n := cache[k]
		if n == nil {
			n = mk(k)
			cache[k] = n
		}
		v := cur[k]
		r := row{n: n, v: [4]float64{
			float64(sub(v.rxBytes, p.rxBytes)) / dt, float64(sub(v.txBytes, p.txBytes)) / dt,
			float64(sub(v.rxPackets, p.rxPackets)) / dt, float64(sub(v.txPackets, p.txPackets)) / dt,
		}}
		if n.physical {
			for i := range sum {
				sum[i] += r.v[i]
			}
		}
		rows = append(rows, r)
	}
	for i := range total {
		b.Add(total[i], units[i], sum[i])
	}
	for _, r := range rows {
		b.Add(r.n.rxBytes, units[0], r.v[0])
		b.Add(r.n.txBytes, units[1], r.v[1])
		b.Add(r.n.rxOps, units[2], r.v[2])
		b.Add(r.n.txOps, units[3], r.v[3])
	}
}

// ifaceNames builds the per-interface names. Loopback has its own series
// (local tests run over it) but is left out of the totals.
func ifaceNames(iface string) *names {
	l := "{iface=" + monitor.LabelValue(iface) + "}"
	return &names{
		rxBytes: "net_rx_bytes_per_s" + l, txBytes: "net_tx_bytes_per_s" + l,
		rxOps: "net_rx_packets_per_s" + l, txOps: "net_tx_packets_per_s" + l,
		physical: iface != "lo",
	}
}

// devNames builds the per-device names. Device-mapper and md devices have
// their own series but are left out of the totals, which would otherwise
// count the same bytes twice (once on dm-0, once on the disk under it).
func (c *Collector) devNames(dev string) *names {
	l := "{dev=" + monitor.LabelValue(dev) + "}"
	return &names{
		rxBytes: "disk_read_bytes_per_s" + l, txBytes: "disk_write_bytes_per_s" + l,
		rxOps: "disk_reads_per_s" + l, txOps: "disk_writes_per_s" + l,
		physical: !strings.HasPrefix(dev, "dm-") && !strings.HasPrefix(dev, "md") && !strings.HasPrefix(dev, "zram"),
	}
}

// Close implements monitor.Collector.
func (c *Collector) Close() error { return nil }

func sub(a, b uint64) uint64 {
	if a < b {
		return 0 // counter reset or wrap: report 0 rather than a huge rate
	}
	return a - b
}
