package sut_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/plateau-perf/plateau/internal/demo/sut"
)

// Example starts the whole demo stack in one process on ephemeral ports, as
// the demo command does with one child process per service, and reads one
// patient's allergies through the front.
func Example() {
	dir, err := os.MkdirTemp("", "sut-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait() // runs after cancel: every Serve has flushed its logs
	defer cancel()
	run := func(serve func(context.Context, net.Listener) error) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		wg.Go(func() {
			if err := serve(ctx, ln); err != nil {
				log.Print(err)
			}
		})
		return "http://" + ln.Addr().String()
	}

	ext, err := sut.NewExternal(sut.ExternalConfig{}) // default latencies
	if err != nil {
		log.Fatal(err)
	}
	extURL := run(ext.Serve)
	const patients = 500
	back, err := sut.NewBack(ctx, sut.BackConfig{
		DBPath: filepath.Join(dir, "cave.db"), Seed: sut.DefaultSeed, Patients: patients,
		AccessLog: filepath.Join(dir, "back.log"),
	})
	if err != nil {
		log.Fatal(err)
	}
	backURL := run(back.Serve)
	front, err := sut.NewFront(sut.FrontConfig{
		Secret: "shared by every front", BackURLs: []string{backURL}, ExternalURL: extURL,
		AccessLog: filepath.Join(dir, "front.log"), ExternalLog: filepath.Join(dir, "front-external.log"),
	})
	if err != nil {
		log.Fatal(err)
	}
	frontURL := run(front.Serve)

	resp, err := http.Post(frontURL+"/token", "application/json", strings.NewReader(`{"user":"perf"}`))
	if err != nil {
		log.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()

	cpr := sut.CPRs(sut.DefaultSeed, patients)[0] // the load test's first CSV row
	req, _ := http.NewRequest(http.MethodGet, frontURL+"/allergies?cpr="+cpr, nil)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var list sut.AllergyList
	json.NewDecoder(resp.Body).Decode(&list)
	fmt.Println(resp.StatusCode, list.CPR == cpr, len(list.Allergies) > 0)
	// Output: 200 true true
}
