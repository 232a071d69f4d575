package host

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
)

// procStat is what the host monitor takes from /proc/stat.
type procStat struct {
	cpu              cpuTimes
	cpus             int
	ctxt, intr       uint64
	running, blocked uint64
}

// parseStat parses /proc/stat: the aggregate cpu line, the per-cpu line
// count, context switches, interrupts and the running/blocked counts (the
// r and b columns of vmstat).
func parseStat(b []byte) (procStat, error) {
	var s procStat
	found := false
	for len(b) > 0 {
		line := nextLine(&b)
		switch {
		case bytes.HasPrefix(line, []byte("cpu ")):
			f := fields(line[4:])
			var v [8]uint64
			for i := 0; i < len(v) && i < len(f); i++ {
				v[i] = parseUint(f[i])
			}
			s.cpu = cpuTimes{user: v[0], nice: v[1], system: v[2], idle: v[3], iowait: v[4], irq: v[5], softirq: v[6], steal: v[7]}
			found = len(f) >= 4
		case bytes.HasPrefix(line, []byte("cpu")):
			s.cpus++
		case bytes.HasPrefix(line, []byte("ctxt ")):
			s.ctxt = parseUint(bytes.TrimSpace(line[5:]))
		case bytes.HasPrefix(line, []byte("intr ")):
			if f := fields(line[5:]); len(f) > 0 {
				s.intr = parseUint(f[0])
			}
		case bytes.HasPrefix(line, []byte("procs_running ")):
			s.running = parseUint(bytes.TrimSpace(line[14:]))
		case bytes.HasPrefix(line, []byte("procs_blocked ")):
			s.blocked = parseUint(bytes.TrimSpace(line[14:]))
		}
	}
	if !found {
		return s, errors.New("stat: no aggregate cpu line")
	}
	return s, nil
}

// meminfo holds /proc/meminfo values in bytes.
type meminfo struct {
	total, free, available, buffers, cached, sreclaimable, swapTotal, swapFree uint64
}

func parseMeminfo(b []byte) meminfo {
	var m meminfo
	for len(b) > 0 {
		line := nextLine(&b)
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := fields(v)
		if len(f) == 0 {
			continue
		}
		n := parseUint(f[0])
		if len(f) > 1 && string(f[1]) == "kB" {
			n *= 1024
		}
		switch string(k) {
		case "MemTotal":
			m.total = n
		case "MemFree":
			m.free = n
		case "MemAvailable":
			m.available = n
		case "Buffers":
			m.buffers = n
		case "Cached":
			m.cached = n
		case "SReclaimable":
			m.sreclaimable = n
		case "SwapTotal":
			m.swapTotal = n
		case "SwapFree":
			m.swapFree = n
		}
	}
	return m
}

// parseNetDev fills out with every interface of /proc/net/dev.
func parseNetDev(b []byte, out map[string]ioCounters) {
	for len(b) > 0 {
		line := nextLine(&b)
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue // the two header lines
		}
		f := fields(rest)
		if len(f) < 10 {
			continue
		}
		out[string(bytes.TrimSpace(name))] = ioCounters{
			rxBytes: parseUint(f[0]), rxPackets: parseUint(f[1]),
			txBytes: parseUint(f[8]), txPackets: parseUint(f[9]),
		}
	}
}

// sectorBytes is the unit of the sector counts in /proc/diskstats, fixed
// by the kernel whatever the device's real sector size.
const sectorBytes = 512

// parseDiskstats fills out with the whole disks of /proc/diskstats: those
// listed in disks when it is known, otherwise every device but partitions
// guessed by name. Loop and RAM disks are skipped. rx is read, tx is write.
func parseDiskstats(b []byte, out map[string]ioCounters, disks map[string]bool) {
	for len(b) > 0 {
		f := fields(nextLine(&b))
		if len(f) < 10 {
			continue
		}
		name := f[2]
		if bytes.HasPrefix(name, []byte("loop")) || bytes.HasPrefix(name, []byte("ram")) {
			continue
		}
		if disks != nil {
			if !disks[string(name)] {
				continue
			}
		} else if isPartition(name) {
			continue
		}
		out[string(name)] = ioCounters{
			rxPackets: parseUint(f[3]), rxBytes: parseUint(f[5]) * sectorBytes,
			txPackets: parseUint(f[7]), txBytes: parseUint(f[9]) * sectorBytes,
		}
	}
}

// isPartition guesses partitions when /sys is not available: sda1, vda2,
// nvme0n1p1, mmcblk0p1.
func isPartition(name []byte) bool {
	n := len(name)
	if n == 0 || name[n-1] < '0' || name[n-1] > '9' {
		return false
	}
	i := n
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	switch {
	case bytes.HasPrefix(name, []byte("nvme")), bytes.HasPrefix(name, []byte("mmcblk")):
		return i > 0 && name[i-1] == 'p'
	case bytes.HasPrefix(name, []byte("sd")), bytes.HasPrefix(name, []byte("vd")),
		bytes.HasPrefix(name, []byte("hd")), bytes.HasPrefix(name, []byte("xvd")):
		return true
	}
	return false
}

func nextLine(b *[]byte) []byte {
	line := *b
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		*b = line[i+1:]
		return line[:i]
	}
	*b = nil
	return line
}

// fields splits on spaces without allocating more than one small slice.
func fields(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
			b = b[1:]
		}
		i := 0
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		b = b[i:]
	}
	return out
}

func parseUint(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}

func parseFloat(b []byte) float64 {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0
	}
	return v
}

func sortStrings(s []string) { slices.Sort(s) }
