package engine

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// schedStat sums, over the process's threads, the time they ran on a CPU
// and the time they waited on a run queue for one (/proc/self/task/*/
// schedstat, fields 1 and 2). The wait is the generator's starvation: time
// it was ready to send or receive and other processes held its CPUs. ok is
// false where the kernel does not report it.
func schedStat() (run, wait time.Duration, ok bool) {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return 0, 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return 0, 0, false
	}
	var buf [128]byte
	for _, n := range names {
		f, err := os.Open("/proc/self/task/" + n + "/schedstat")
		if err != nil {
			continue // the thread ended
		}
		k, _ := f.Read(buf[:])
		f.Close()
		fields := bytes.Fields(buf[:k])
		if len(fields) < 2 {
			continue
		}
		r, err1 := strconv.ParseInt(string(fields[0]), 10, 64)
		w, err2 := strconv.ParseInt(string(fields[1]), 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		run += time.Duration(r)
		wait += time.Duration(w)
		ok = true
	}
	return run, wait, ok
}
