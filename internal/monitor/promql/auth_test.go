package promql

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// newFakeAuthServer answers instant and range queries for "up" with one
// series and records the Authorization header it saw. (Credentials are the
// one thing the real Prometheus in the other tests does not check.)
func newFakeAuthServer(t *testing.T, seen *string) string {
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*seen = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/query":
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"job":"x"},"value":[1700000000,"1"]}]}}`))
		case "/api/v1/query_range":
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"x"},"values":[[1700000000,"1"]]}]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
