//go:build linux

// Command gofloor is the plain-Go counterpart of floor.c: the open model written the
// way Go programs usually are. A dispatcher wakes on a timer and hands each due
// request to one of N goroutines, each owning a keep-alive net.Conn that it writes
// to and reads from. Nothing else: no parsing, timing, recording or files. It prints
// its CPU per request (user+system time of the process / responses) as one JSON line.
//
// RATE 0 is the closed loop instead: each goroutine sends its next request as soon as
// the last response has arrived, as wrk does (run.py --closed).
//
//	gofloor ADDR RATE SECONDS [CONNS]    (a 127.0.0.1 address)
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gofloor:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("usage: gofloor ADDR RATE SECONDS [CONNS]")
	}
	rate, err1 := strconv.Atoi(args[1])
	secs, err2 := strconv.Atoi(args[2])
	conns := 10
	var err3 error
	if len(args) > 3 {
		conns, err3 = strconv.Atoi(args[3])
	}
	if err1 != nil || err2 != nil || err3 != nil || rate < 0 || secs <= 0 || conns <= 0 {
		return fmt.Errorf("bad arguments %q", args)
	}
	req := []byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: gofloor\r\n\r\n")
	work := make(chan struct{}, conns)
	done := make(chan error, conns)
	count := make([]int, conns)
	var stop atomic.Bool
	closedLoop := rate == 0
	for i := range conns {
		c, err := net.Dial("tcp", args[0])
		if err != nil {
			return err
		}
		go func() {
			buf := make([]byte, 4096)
			for {
				if _, ok := <-work; !ok && (!closedLoop || stop.Load()) {
					break
				}
				if _, err := c.Write(req); err != nil {
					done <- err
					return
				}
				for {
					n, err := c.Read(buf)
					if err != nil {
						done <- err
						return
					}
					// nginx's `return 200 'ok'`: the response ends with the body "ok".
					if bytes.HasSuffix(buf[:n], []byte("ok")) {
						break
					}
				}
				count[i]++
			}
			done <- nil
		}()
	}
	dropped := 0
	if rate == 0 {
		// Closed loop: the work channel is closed at the end; until then every
		// goroutine finds a request to send at once.
		close(work)
		time.Sleep(time.Duration(secs) * time.Second)
		stop.Store(true)
	} else {
		period := time.Second / time.Duration(rate)
		next := time.Now()
		end := next.Add(time.Duration(secs) * time.Second)
		t := time.NewTimer(0)
		for now := range t.C {
			if now.After(end) {
				break
			}
			for ; !next.After(now); next = next.Add(period) {
				select {
				case work <- struct{}{}:
				default:
					dropped++
				}
			}
			t.Reset(time.Until(next))
		}
		close(work)
	}
	total := 0
	for range conns {
		if err := <-done; err != nil {
			return err
		}
	}
	for _, n := range count {
		total += n
	}
	if total == 0 {
		return fmt.Errorf("no responses")
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	us := func(t syscall.Timeval) float64 { return float64(t.Sec)*1e6 + float64(t.Usec) }
	per := func(v float64) float64 { return v / float64(total) }
	return json.NewEncoder(os.Stdout).Encode(map[string]any{
		"tool": "go-floor", "requests": total, "dropped": dropped,
		"user_us": per(us(ru.Utime)), "sys_us": per(us(ru.Stime)),
		"cpu_us": per(us(ru.Utime) + us(ru.Stime)), "vcsw": per(float64(ru.Nvcsw)),
	})
}
