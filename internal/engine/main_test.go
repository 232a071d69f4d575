package engine_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary serve HTTP in a child process
// (PLATEAU_TEST_SERVE=1), for measurements that must not count the server's
// memory or CPU with the generator's; PLATEAU_TEST_SERVE_DELAY (a duration)
// makes it answer after that long, like the harness's delay server.
//
// PLATEAU_TEST_SPIN=1 makes it burn a CPU instead, for at most 30 s: another
// process on the generator's cores.
func TestMain(m *testing.M) {
	if os.Getenv("PLATEAU_TEST_SPIN") == "1" {
		for t0 := time.Now(); time.Since(t0) < 30*time.Second; {
		}
		os.Exit(0)
	}
	if os.Getenv("PLATEAU_TEST_SERVE") == "1" {
		delay, _ := time.ParseDuration(os.Getenv("PLATEAU_TEST_SERVE_DELAY"))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(2)
		}
		fmt.Println(ln.Addr().String())
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if delay > 0 {
				time.Sleep(delay)
			}
			w.Write([]byte("ok"))
		}))
		os.Exit(0)
	}
	os.Exit(m.Run())
}
