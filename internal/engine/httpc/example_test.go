package httpc_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

// One virtual user: a Client, a Request and a Result, all reused for every
// call, so the loop allocates nothing once the connection is open.
func ExampleClient_Do() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "42")
		io.WriteString(w, `{"status":"up"}`)
	}))
	defer srv.Close()

	c := httpc.New(httpc.Config{MaxBody: 4 << 10})
	defer c.Close()
	req := &httpc.Request{URL: srv.URL + "/health", Header: []httpc.Header{{Name: "Accept", Value: "application/json"}}}
	var res httpc.Result
	for i := range 3 {
		if err := c.Do(context.Background(), req, &res); err != nil {
			fmt.Println("failed:", res.Class, err)
			return
		}
		fmt.Println(i, res.Status, string(res.Body), res.Header("X-Request-Id"), "reused:", res.Reused)
	}
	// Output:
	// 0 200 {"status":"up"} 42 reused: false
	// 1 200 {"status":"up"} 42 reused: true
	// 2 200 {"status":"up"} 42 reused: true
}
