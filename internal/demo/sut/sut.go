// Package sut is plateau's bundled demo system under test, modelled on the
// LAR → CAVE → FHIR allergy service of reference study 000.
//
// It has three kinds of process, each a type with a Config, a constructor and
// Serve(ctx, listener):
//
//   - Front ("lar"): issues HMAC-signed bearer tokens and answers
//     GET /allergies?cpr=… by calling three external services and then one of
//     several back instances (round-robin).
//   - Back ("cave"): answers GET /patients/{cpr}/allergies from an embedded
//     SQLite database that it generates deterministically from a seed.
//   - External: the audit, consent and relation services (the reference's
//     "MSB" services) with configurable latency and failure rate.
//
// Front and back write one access-log line per request (AccessLogFormat) and
// the front writes one line per external call (ExternalLogFormat), the same
// logs the reference study analysed. The caller picks listeners and ports;
// this package never reads flags, environment or signals.
package sut

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Defaults shared by the back database and the load-test CSV: the same seed
// and size give the same CPR list in both places.
const (
	// DefaultSeed seeds the patient data; it is the reference study's date.
	DefaultSeed int64 = 20190513
	// DefaultPatients is the reference study's database size.
	DefaultPatients = 50_000
)

// MessageIDHeader carries the message id that ties a front request to its
// external calls and its back call in every log.
const MessageIDHeader = "X-Message-Id"

// defaultFlushInterval bounds how long a log line may sit in a buffer.
const defaultFlushInterval = time.Second

// shutdownTimeout bounds a graceful stop; in-flight requests longer than this
// are cut off so that a stopping demo never hangs.
const shutdownTimeout = 5 * time.Second

// serve runs srv on ln until ctx is cancelled, then shuts it down gracefully
// and runs closers (log flushes, database close) after the last request has
// finished, so that no log line of a completed request is lost.
func serve(ctx context.Context, ln net.Listener, h http.Handler, closers ...func() error) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	var err error
	select {
	case err = <-errc:
		// The listener failed before we were asked to stop.
		err = fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		if serr := srv.Shutdown(sctx); serr != nil {
			// Shutdown timed out: drop the stragglers rather than hang.
			err = errors.Join(fmt.Errorf("shutting down: %w", serr), srv.Close())
		}
		cancel()
		if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	for _, c := range closers {
		err = errors.Join(err, c())
	}
	return err
}

// newMessageID returns a random 32-hex-digit id, unique across instances
// without coordination.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// messageID returns the request's message id, or a new one when the header is
// absent or unusable in a space-separated log line.
func messageID(r *http.Request) string {
	id := r.Header.Get(MessageIDHeader)
	if id == "" || len(id) > 128 {
		return newMessageID()
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return newMessageID()
		}
	}
	return id
}

// writeJSONError answers with {"error": msg}.
func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(errorBody{Error: msg})
}

// errorBody is the JSON shape of every error answer.
type errorBody struct {
	Error string `json:"error"`
}
