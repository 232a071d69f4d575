package process

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// TicksPerSecond is USER_HZ, the unit of the CPU times in /proc/<pid>/stat.
// The kernel fixes it at 100 for user space on every architecture Linux
// exports /proc on, which is also what procfs and ps assume.
const TicksPerSecond = 100

// Stat is the part of /proc/<pid>/stat the monitors use. CPU times are in
// ticks (TicksPerSecond); StartTime is ticks since boot and, with Pid,
// identifies a process across pid reuse.
type Stat struct {
	Pid       int
	Comm      string
	State     byte
	PPid      int
	UTime     uint64
	STime     uint64
	CUTime    uint64 // waited-for children's user time
	CSTime    uint64 // waited-for children's system time
	Threads   int64
	StartTime uint64
	RSSPages  int64
}

// ReadFile reads a small /proc file into buf (grown when needed) without the
// extra stat call os.ReadFile makes, and returns the filled slice.
func ReadFile(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	if cap(buf) < 512 {
		buf = make([]byte, 0, 4096)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// ParseStat parses the contents of /proc/<pid>/stat. The command name is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func ParseStat(b []byte) (Stat, error) {
	var s Stat
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 1 || closing < open {
		return s, errors.New("malformed stat: no command name")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:open])))
	if err != nil {
		return s, fmt.Errorf("malformed stat pid: %w", err)
	}
	s.Pid = pid
	s.Comm = string(b[open+1 : closing])
	rest := b[closing+1:]
	// Field numbers as in proc(5): 3 is the state, right after the name.
	field := 2
	for len(rest) > 0 {
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		tok := bytes.TrimSpace(rest[:end])
		rest = rest[end:]
		if len(tok) == 0 {
			break
		}
		field++
		switch field {
		case 3:
			s.State = tok[0]
		case 4:
			s.PPid = int(atoi(tok))
		case 14:
			s.UTime = uint64(atoi(tok))
		case 15:
			s.STime = uint64(atoi(tok))
		case 16:
			s.CUTime = uint64(atoi(tok))
		case 17:
			s.CSTime = uint64(atoi(tok))
		case 20:
			s.Threads = atoi(tok)
		case 22:
			s.StartTime = uint64(atoi(tok))
		case 24:
			s.RSSPages = atoi(tok)
			return s, nil
		}
	}
	return s, fmt.Errorf("malformed stat: only %d fields", field)
}

// atoi parses a decimal integer without allocating; junk yields 0 (the
// kernel writes only digits and a leading minus sign here).
func atoi(b []byte) int64 {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// ReadStat reads /proc/<pid>/stat under root (normally "/proc").
func ReadStat(root string, pid int, buf []byte) (Stat, []byte, error) {
	buf, err := ReadFile(root+"/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		return Stat{}, buf, err
	}
	s, err := ParseStat(buf)
	return s, buf, err
}

// IO holds the storage bytes of /proc/<pid>/io (read_bytes, write_bytes:
// what reached the block layer, not socket or pipe traffic).
type IO struct {
	ReadBytes  uint64
	WriteBytes uint64
}

// ParseIO parses the contents of /proc/<pid>/io.
func ParseIO(b []byte) (IO, error) {
	var io IO
	found := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		k, v, ok := bytes.Cut(line, []byte(": "))
		if !ok {
			continue
		}
		switch string(k) {
		case "read_bytes":
			io.ReadBytes = uint64(atoi(bytes.TrimSpace(v)))
			found++
		case "write_bytes":
			io.WriteBytes = uint64(atoi(bytes.TrimSpace(v)))
			found++
		}
	}
	if found != 2 {
		return io, errors.New("malformed io: read_bytes or write_bytes missing")
	}
	return io, nil
}

// NSPid returns the innermost namespace pid of a process from
// /proc/<pid>/status (the last number of the NSpid line), which is the pid
// the process sees itself as, e.g. inside a container.
func NSPid(root string, pid int) (int, error) {
	b, err := ReadFile(root+"/"+strconv.Itoa(pid)+"/status", nil)
	if err != nil {
		return 0, err
	}
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if v, ok := bytes.CutPrefix(line, []byte("NSpid:")); ok {
			f := bytes.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.Atoi(string(f[len(f)-1]))
		}
	}
	// Kernels before 4.1 have no NSpid: the process is in our namespace.
	return pid, nil
}

// Children lists the direct children of pid, reading the children file of
// every thread (a child is listed under the thread that forked it).
func Children(root string, pid int, buf []byte, out []int) ([]int, []byte, error) {
	dir := root + "/" + strconv.Itoa(pid) + "/task"
	f, err := os.Open(dir)
	if err != nil {
		return out, buf, err
	}
	tids, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return out, buf, err
	}
	for _, tid := range tids {
		buf, err = ReadFile(dir+"/"+tid+"/children", buf)
		if err != nil {
			continue // thread exited meanwhile
		}
		for _, f := range bytes.Fields(buf) {
			if c := int(atoi(f)); c > 0 {
				out = append(out, c)
			}
		}
	}
	return out, buf, nil
}

// CountFDs counts the open file descriptors of pid.
func CountFDs(root string, pid int) (int, error) {
	f, err := os.Open(root + "/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(256)
		n += len(names)
		if errors.Is(err, io.EOF) || (err == nil && len(names) == 0) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
