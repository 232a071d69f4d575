package engine_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"
)

// TestMain lets the test binary serve HTTP in a child process
// (PLATEAU_TEST_SERVE=1), for measurements that must not count the server's
// memory or CPU with the generator's.
func TestMain(m *testing.M) {
	if os.Getenv("PLATEAU_TEST_SERVE") == "1" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			os.Exit(2)
		}
		fmt.Println(ln.Addr().String())
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
		os.Exit(0)
	}
	os.Exit(m.Run())
}
