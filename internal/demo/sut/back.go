package sut

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// BackConfig configures one back ("cave") instance. Zero fields take the
// defaults documented on each field.
type BackConfig struct {
	// DBPath is the SQLite file; several instances may share one. Required.
	DBPath string
	// Seed selects the generated data; zero is a seed like any other
	// (DefaultBackConfig sets DefaultSeed). Use the same seed and patient
	// count for the load test's CSV (WriteCPRCSV).
	Seed int64
	// Patients is the number of patients (default DefaultPatients).
	Patients int
	// AccessLog is the access log path (AccessLogFormat); empty disables it.
	AccessLog string
	// FlushInterval bounds how long a log line stays buffered (default 1 s).
	FlushInterval time.Duration
	// MaxConns bounds concurrent database connections (default 8).
	MaxConns int
}

// DefaultBackConfig returns the reference-sized configuration for a database
// at dbPath and an access log at accessLog.
func DefaultBackConfig(dbPath, accessLog string) BackConfig {
	return BackConfig{DBPath: dbPath, Seed: DefaultSeed, Patients: DefaultPatients, AccessLog: accessLog}
}

// Back is one back ("cave") instance serving
//
//	GET /patients/{cpr}/allergies  → 200 AllergyList JSON, 400 malformed cpr, 404 unknown cpr
//	GET /health                    → 200 {"status":"ok"}
//
// Create it with NewBack and run it with Serve.
type Back struct {
	cfg       BackConfig
	store     *store
	log       *logFile
	generated bool
	closeOnce sync.Once
	closeErr  error
}

// NewBack prepares the database (generating it on first start, see
// PrepareDB), opens it read-only and opens the access log.
func NewBack(ctx context.Context, cfg BackConfig) (*Back, error) {
	if cfg.Patients == 0 {
		cfg.Patients = DefaultPatients
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 8
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = defaultFlushInterval
	}
	created, err := PrepareDB(ctx, cfg.DBPath, cfg.Seed, cfg.Patients)
	if err != nil {
		return nil, fmt.Errorf("back: %w", err)
	}
	st, err := openStore(cfg.DBPath, cfg.MaxConns)
	if err != nil {
		return nil, fmt.Errorf("back: %w", err)
	}
	log, err := openLog(cfg.AccessLog, cfg.FlushInterval)
	if err != nil {
		st.close()
		return nil, fmt.Errorf("back: %w", err)
	}
	return &Back{cfg: cfg, store: st, log: log, generated: created}, nil
}

// Generated reports whether NewBack generated the database rather than
// reusing an existing file.
func (b *Back) Generated() bool { return b.generated }

// Serve answers requests on ln until ctx is cancelled, then stops gracefully:
// in-flight requests finish, the access log is flushed and the database is
// closed. It returns nil after a graceful stop. Call it once.
func (b *Back) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, b.handler(), b.Close)
}

// Close flushes the log and closes the database; Serve calls it on the way
// out, so it is only needed when Serve is never called. Idempotent.
func (b *Back) Close() error {
	b.closeOnce.Do(func() {
		b.closeErr = errors.Join(b.log.close(), b.store.close())
	})
	return b.closeErr
}

func (b *Back) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"patients\":%d}\n", b.cfg.Patients)
	})
	mux.HandleFunc("GET /patients/{cpr}/allergies", b.allergies)
	return withAccessLog(b.log, mux)
}

func (b *Back) allergies(w http.ResponseWriter, r *http.Request) {
	cpr := r.PathValue("cpr")
	if !validCPR(cpr) {
		writeJSONError(w, http.StatusBadRequest, "cpr must be 10 digits")
		return
	}
	list, err := b.store.allergies(r.Context(), cpr)
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSONError(w, http.StatusNotFound, ErrNotFound.Error())
		return
	case err != nil:
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list) // a write error means the client left
}
