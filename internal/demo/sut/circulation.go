package sut

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // PostgreSQL for the circulation service
)

// The circulation service models the FOLIO check-in / check-out flow of
// reference studies 001 and 004: log in for a token, look up the patron and
// the item, check the item out (a loan), later check it in, and — for 004 —
// a data import that writes batches of records while circulation goes on.
// It keeps its data in an embedded SQLite file or, given a PostgreSQL DSN,
// in PostgreSQL (so a postgres monitor sees its statements).

// Circulation releases: the current one and the previous one, whose patron
// check reads the loans without the index (a realistic regression: a
// function around an indexed column).
const (
	ReleaseCurrent  = "current"
	ReleasePrevious = "previous"
)

// CirculationConfig configures one circulation instance.
type CirculationConfig struct {
	// SQLite is the embedded database file; DSN a PostgreSQL connection
	// string instead (postgres://…). Exactly one is required.
	SQLite, DSN string
	// Items and Patrons are the data set's size (default 2,000 each); the
	// data are the demo's item barcodes 100000001… and patron barcodes
	// 200000001…, and HistoryLoans closed loans (default 20,000) give the
	// loans table a realistic size.
	Items, Patrons, HistoryLoans int
	// Release is ReleaseCurrent (default) or ReleasePrevious.
	Release string
	// LeakBytes > 0 plants a slow leak: every check-out keeps LeakBytes
	// that are never freed, and every check-in walks what was kept
	// (LeakCost per kept entry), so memory and check-in time grow with the
	// run's length — what a soak test is for.
	LeakBytes int
	LeakCost  time.Duration
	// DataImportURL, when set, is the data-import module's base URL: the
	// service routes POST /data-import/… there, as FOLIO's gateway does.
	DataImportURL string
	// Secret signs tokens (random when empty).
	Secret    string
	AccessLog string
}

// Circulation serves
//
//	POST /authn/login                      {"username","password"} → 201, X-Okapi-Token
//	GET  /users?query=barcode==B           {"users":[…],"totalRecords":n}
//	GET  /inventory/items?query=barcode==B {"items":[…],"totalRecords":n}
//	POST /circulation/check-out-by-barcode {"itemBarcode","userBarcode"} → 201 loan; 422 when the item is out
//	POST /circulation/check-in-by-barcode  {"itemBarcode"} → 200; 422 when the item is not out
//	GET  /circulation/loans?query=userBarcode==B  open loans of a patron
//	POST /inventory/instances/batch        {"records":[…]} → 201 (the data import's writes)
//	POST /data-import/…                    routed to the data-import module (DataImportURL)
//	POST /admin/prepare                    removes the tests' loans, makes items available (the reference's data preparation)
//	GET  /health
//
// Every call but login, prepare and health needs the X-Okapi-Token header.
type Circulation struct {
	cfg    CirculationConfig
	db     *sql.DB
	pg     bool
	signer tokenSigner
	access *logFile

	leakMu sync.Mutex
	leaked [][]byte
}

// NewCirculation opens (and on first use fills) the database.
func NewCirculation(ctx context.Context, cfg CirculationConfig) (*Circulation, error) {
	if (cfg.SQLite == "") == (cfg.DSN == "") {
		return nil, errors.New("circulation: give exactly one of an SQLite file and a PostgreSQL DSN")
	}
	if cfg.Items <= 0 {
		cfg.Items = 2000
	}
	if cfg.Patrons <= 0 {
		cfg.Patrons = 2000
	}
	if cfg.HistoryLoans < 0 {
		cfg.HistoryLoans = 0
	} else if cfg.HistoryLoans == 0 {
		cfg.HistoryLoans = 20000
	}
	switch cfg.Release {
	case "":
		cfg.Release = ReleaseCurrent
	case ReleaseCurrent, ReleasePrevious:
	default:
		return nil, fmt.Errorf("circulation: release %q: want %s or %s", cfg.Release, ReleaseCurrent, ReleasePrevious)
	}
	if cfg.DataImportURL != "" {
		u, err := baseURL(cfg.DataImportURL)
		if err != nil {
			return nil, fmt.Errorf("circulation: data-import URL: %w", err)
		}
		cfg.DataImportURL = u
	}
	if cfg.LeakCost <= 0 {
		cfg.LeakCost = 20 * time.Microsecond
	}
	if cfg.Secret == "" {
		cfg.Secret = newMessageID()
	}
	c := &Circulation{cfg: cfg, signer: tokenSigner{secret: []byte(cfg.Secret), ttl: time.Hour}}
	var err error
	if cfg.DSN != "" {
		c.pg = true
		c.db, err = sql.Open("pgx", cfg.DSN)
	} else {
		var src string
		if src, err = dsn(cfg.SQLite, "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate"); err == nil {
			c.db, err = sql.Open("sqlite", src)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("circulation: opening the database: %w", err)
	}
	if c.pg {
		c.db.SetMaxOpenConns(20)
	} else {
		c.db.SetMaxOpenConns(8)
	}
	if err := c.fill(ctx); err != nil {
		c.db.Close()
		return nil, fmt.Errorf("circulation: preparing the data: %w", err)
	}
	if c.access, err = openLog(cfg.AccessLog, 0); err != nil {
		c.db.Close()
		return nil, fmt.Errorf("circulation: %w", err)
	}
	return c, nil
}

// q rewrites ? placeholders as $1, $2, … for PostgreSQL.
func (c *Circulation) q(s string) string {
	if !c.pg {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ItemBarcode and PatronBarcode are the demo data's barcodes (i from 1).
func ItemBarcode(i int) string   { return strconv.Itoa(100000000 + i) }
func PatronBarcode(i int) string { return strconv.Itoa(200000000 + i) }

// ItemsCSV is the check-out/check-in plans' feeder of the first n items and
// patrons (item_barcode,user_barcode with a header).
func ItemsCSV(n int) []byte {
	b := []byte("item_barcode,user_barcode\n")
	for i := 1; i <= n; i++ {
		b = append(b, ItemBarcode(i)...)
		b = append(b, ',')
		b = append(b, PatronBarcode(i)...)
		b = append(b, '\n')
	}
	return b
}

// fill creates the tables and, when they are empty, the items, patrons and
// loan history.
func (c *Circulation) fill(ctx context.Context) error {
	for _, s := range []string{
		`CREATE TABLE IF NOT EXISTS patron (id INTEGER PRIMARY KEY, barcode TEXT NOT NULL UNIQUE, name TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, barcode TEXT NOT NULL UNIQUE, title TEXT NOT NULL, status TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS loan (id TEXT PRIMARY KEY, item_barcode TEXT NOT NULL, user_barcode TEXT NOT NULL, status TEXT NOT NULL, out_at TEXT NOT NULL, in_at TEXT)`,
		`CREATE INDEX IF NOT EXISTS loan_user ON loan (user_barcode, status)`,
		`CREATE INDEX IF NOT EXISTS loan_item ON loan (item_barcode, status)`,
		`CREATE TABLE IF NOT EXISTS instance (id TEXT PRIMARY KEY, job TEXT NOT NULL, title TEXT NOT NULL, record TEXT NOT NULL)`,
	} {
		if _, err := c.db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	var n int
	if err := c.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM item`).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i := 1; i <= c.cfg.Patrons; i++ {
		if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO patron (id, barcode, name) VALUES (?, ?, ?)`), i, PatronBarcode(i), "patron "+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for i := 1; i <= c.cfg.Items; i++ {
		if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO item (id, barcode, title, status) VALUES (?, ?, ?, 'Available')`), i, ItemBarcode(i), "title "+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for i := 1; i <= c.cfg.HistoryLoans; i++ {
		if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO loan (id, item_barcode, user_barcode, status, out_at, in_at) VALUES (?, ?, ?, 'Closed', '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z')`),
			"h"+strconv.Itoa(i), ItemBarcode(1+i%c.cfg.Items), PatronBarcode(1+i%c.cfg.Patrons)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Prepare is the data preparation before a test: the loans of earlier
// tests removed (the history stays), every item available, imported
// instances removed — each test starts from the same data.
func (c *Circulation) Prepare(ctx context.Context) error {
	for _, s := range []string{
		`DELETE FROM loan WHERE id NOT LIKE 'h%'`,
		`UPDATE item SET status = 'Available' WHERE status <> 'Available'`,
		`DELETE FROM instance`,
	} {
		if _, err := c.db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Serve answers on ln until ctx ends.
func (c *Circulation) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, withAccessLog(c.access, c.handler()), c.Close)
}

// Close closes the database and the log.
func (c *Circulation) Close() error { return errors.Join(c.db.Close(), c.access.close()) }

func (c *Circulation) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /authn/login", c.login)
	mux.HandleFunc("POST /admin/prepare", func(w http.ResponseWriter, r *http.Request) {
		if err := c.Prepare(r.Context()); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "prepared"})
	})
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if _, err := c.signer.verify(r.Header.Get("X-Okapi-Token"), time.Now()); err != nil {
				writeJSONError(w, http.StatusUnauthorized, "invalid token")
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /users", auth(c.users))
	mux.HandleFunc("GET /inventory/items", auth(c.items))
	mux.HandleFunc("POST /circulation/check-out-by-barcode", auth(c.checkOut))
	mux.HandleFunc("POST /circulation/check-in-by-barcode", auth(c.checkIn))
	mux.HandleFunc("GET /circulation/loans", auth(c.loans))
	mux.HandleFunc("POST /inventory/instances/batch", auth(c.instances))
	if c.cfg.DataImportURL != "" {
		u, _ := url.Parse(c.cfg.DataImportURL) // checked by NewCirculation
		p := httputil.NewSingleHostReverseProxy(u)
		p.Transport = &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}
		// As FOLIO's gateway, tell the module where to call back.
		mux.Handle("POST /data-import/", auth(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Set(OkapiURLHeader, "http://"+r.Host)
			p.ServeHTTP(w, r)
		}))
	}
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// barcodeQuery reads "field==value" from the query parameter "query".
func barcodeQuery(r *http.Request, field string) (string, bool) {
	v, ok := strings.CutPrefix(r.URL.Query().Get("query"), field+"==")
	return v, ok && v != ""
}

func (c *Circulation) login(w http.ResponseWriter, r *http.Request) {
	var in struct{ Username, Password string }
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.Username == "" {
		writeJSONError(w, http.StatusBadRequest, "want {\"username\", \"password\"}")
		return
	}
	w.Header().Set("X-Okapi-Token", c.signer.issue(in.Username, time.Now()))
	writeJSON(w, http.StatusCreated, map[string]string{"username": in.Username})
}

func (c *Circulation) users(w http.ResponseWriter, r *http.Request) {
	b, ok := barcodeQuery(r, "barcode")
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "query=barcode==B")
		return
	}
	type user struct {
		ID      int    `json:"id"`
		Barcode string `json:"barcode"`
		Name    string `json:"name"`
	}
	var u user
	err := c.db.QueryRowContext(r.Context(), c.q(`SELECT id, barcode, name FROM patron WHERE barcode = ?`), b).Scan(&u.ID, &u.Barcode, &u.Name)
	out := struct {
		Users []user `json:"users"`
		Total int    `json:"totalRecords"`
	}{Users: []user{}}
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	default:
		out.Users, out.Total = append(out.Users, u), 1
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *Circulation) items(w http.ResponseWriter, r *http.Request) {
	b, ok := barcodeQuery(r, "barcode")
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "query=barcode==B")
		return
	}
	type item struct {
		ID      int    `json:"id"`
		Barcode string `json:"barcode"`
		Title   string `json:"title"`
		Status  string `json:"status"`
	}
	var it item
	err := c.db.QueryRowContext(r.Context(), c.q(`SELECT id, barcode, title, status FROM item WHERE barcode = ?`), b).Scan(&it.ID, &it.Barcode, &it.Title, &it.Status)
	out := struct {
		Items []item `json:"items"`
		Total int    `json:"totalRecords"`
	}{Items: []item{}}
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	default:
		out.Items, out.Total = append(out.Items, it), 1
	}
	writeJSON(w, http.StatusOK, out)
}

type barcodes struct {
	ItemBarcode string `json:"itemBarcode"`
	UserBarcode string `json:"userBarcode"`
}

// patronCheck counts the patron's open loans (the patron-block check). The
// previous release wraps the indexed column in a function, so the database
// reads the whole loan table instead of the index.
func (c *Circulation) patronCheck(ctx context.Context, user string) (int, error) {
	query := `SELECT COUNT(*) FROM loan WHERE user_barcode = ? AND status = 'Open'`
	if c.cfg.Release == ReleasePrevious {
		query = `SELECT COUNT(*) FROM loan WHERE lower(user_barcode) = lower(?) AND status = 'Open'`
	}
	var n int
	err := c.db.QueryRowContext(ctx, c.q(query), user).Scan(&n)
	return n, err
}

func (c *Circulation) checkOut(w http.ResponseWriter, r *http.Request) {
	var in barcodes
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.ItemBarcode == "" || in.UserBarcode == "" {
		writeJSONError(w, http.StatusBadRequest, "want {\"itemBarcode\", \"userBarcode\"}")
		return
	}
	ctx := r.Context()
	if _, err := c.patronCheck(ctx, in.UserBarcode); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, c.q(`UPDATE item SET status = 'Checked out' WHERE barcode = ? AND status = 'Available'`), in.ItemBarcode)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeJSONError(w, http.StatusUnprocessableEntity, "Item is already checked out or does not exist")
		return
	}
	id := newMessageID()
	now := time.Now().UTC().Format(time.RFC3339)
	if _, err := tx.ExecContext(ctx, c.q(`INSERT INTO loan (id, item_barcode, user_barcode, status, out_at) VALUES (?, ?, ?, 'Open', ?)`),
		id, in.ItemBarcode, in.UserBarcode, now); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := tx.Commit(); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if c.cfg.LeakBytes > 0 {
		c.leakMu.Lock()
		c.leaked = append(c.leaked, make([]byte, c.cfg.LeakBytes))
		c.leakMu.Unlock()
	}
	writeJSON(w, http.StatusCreated, map[string]string{"id": id, "itemBarcode": in.ItemBarcode, "userBarcode": in.UserBarcode, "loanDate": now})
}

func (c *Circulation) checkIn(w http.ResponseWriter, r *http.Request) {
	var in barcodes
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.ItemBarcode == "" {
		writeJSONError(w, http.StatusBadRequest, "want {\"itemBarcode\"}")
		return
	}
	ctx := r.Context()
	if c.cfg.LeakBytes > 0 {
		// The planted leak: every kept entry is walked (touched) on each
		// check-in, at LeakCost per entry.
		c.leakMu.Lock()
		n := len(c.leaked)
		for _, b := range c.leaked {
			b[0]++
		}
		c.leakMu.Unlock()
		time.Sleep(time.Duration(n) * c.cfg.LeakCost)
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer tx.Rollback()
	now := time.Now().UTC().Format(time.RFC3339)
	res, err := tx.ExecContext(ctx, c.q(`UPDATE loan SET status = 'Closed', in_at = ? WHERE item_barcode = ? AND status = 'Open'`), now, in.ItemBarcode)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		writeJSONError(w, http.StatusUnprocessableEntity, "Item is not checked out")
		return
	}
	if _, err := tx.ExecContext(ctx, c.q(`UPDATE item SET status = 'Available' WHERE barcode = ?`), in.ItemBarcode); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if err := tx.Commit(); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"itemBarcode": in.ItemBarcode, "returnDate": now})
}

func (c *Circulation) loans(w http.ResponseWriter, r *http.Request) {
	b, ok := barcodeQuery(r, "userBarcode")
	if !ok {
		writeJSONError(w, http.StatusBadRequest, "query=userBarcode==B")
		return
	}
	rows, err := c.db.QueryContext(r.Context(), c.q(`SELECT id, item_barcode, out_at FROM loan WHERE user_barcode = ? AND status = 'Open' ORDER BY out_at`), b)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer rows.Close()
	type loan struct {
		ID          string `json:"id"`
		ItemBarcode string `json:"itemBarcode"`
		LoanDate    string `json:"loanDate"`
	}
	out := struct {
		Loans []loan `json:"loans"`
		Total int    `json:"totalRecords"`
	}{Loans: []loan{}}
	for rows.Next() {
		var l loan
		if err := rows.Scan(&l.ID, &l.ItemBarcode, &l.LoanDate); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		out.Loans = append(out.Loans, l)
	}
	if err := rows.Err(); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out.Total = len(out.Loans)
	writeJSON(w, http.StatusOK, out)
}

// ImportRecord is one record of a data-import batch.
type ImportRecord struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (c *Circulation) instances(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Job     string         `json:"job"`
		Records []ImportRecord `json:"records"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20)).Decode(&in); err != nil || in.Job == "" {
		writeJSONError(w, http.StatusBadRequest, "want {\"job\", \"records\": […]}")
		return
	}
	ctx := r.Context()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer tx.Rollback()
	ins := c.q(`INSERT INTO instance (id, job, title, record) VALUES (?, ?, ?, ?)`)
	for _, rec := range in.Records {
		if _, err := tx.ExecContext(ctx, ins, rec.ID, in.Job, rec.Title, rec.Body); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if err := tx.Commit(); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int{"created": len(in.Records)})
}

// DataImportConfig configures the data-import module of reference 004: it
// takes chunks of records, transforms each (parsing and hashing, the CPU
// cost of a MARC conversion) and writes them through the circulation
// service's batch endpoint.
type DataImportConfig struct {
	// CirculationURL is the circulation service's base URL; empty takes
	// it from each request's X-Okapi-Url header (set by the circulation
	// service when it routes the call here), which must be a loopback
	// address.
	CirculationURL string
	// Work is how many hashing rounds each record costs (default 200).
	Work      int
	AccessLog string
}

// DataImport serves POST /data-import/chunks {"records": N, "job": "…"}
// (with X-Okapi-Token, passed on) → 201 {"created": N}, and GET /health.
type DataImport struct {
	cfg    DataImportConfig
	client *http.Client
	access *logFile
}

// NewDataImport checks cfg and opens the log.
func NewDataImport(cfg DataImportConfig) (*DataImport, error) {
	var err error
	if cfg.CirculationURL != "" {
		if cfg.CirculationURL, err = baseURL(cfg.CirculationURL); err != nil {
			return nil, fmt.Errorf("data import: circulation URL: %w", err)
		}
	}
	if cfg.Work <= 0 {
		cfg.Work = 200
	}
	d := &DataImport{cfg: cfg, client: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16}}}
	if d.access, err = openLog(cfg.AccessLog, 0); err != nil {
		return nil, fmt.Errorf("data import: %w", err)
	}
	return d, nil
}

// Serve answers on ln until ctx ends.
func (d *DataImport) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, withAccessLog(d.access, d.handler()), d.access.close)
}

func (d *DataImport) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /data-import/chunks", d.chunk)
	return mux
}

func (d *DataImport) chunk(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Records int    `json:"records"`
		Job     string `json:"job"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&in); err != nil || in.Records <= 0 || in.Records > 10000 || in.Job == "" {
		writeJSONError(w, http.StatusBadRequest, "want {\"records\": 1…10000, \"job\": \"…\"}")
		return
	}
	recs := make([]ImportRecord, in.Records)
	for i := range recs {
		// The conversion: a record body hashed Work times stands for the
		// parsing and mapping of a MARC record.
		sum := sha256.Sum256([]byte(in.Job + "/" + strconv.Itoa(i)))
		for range d.cfg.Work {
			sum = sha256.Sum256(sum[:])
		}
		h := hex.EncodeToString(sum[:])
		recs[i] = ImportRecord{ID: in.Job + "-" + strconv.Itoa(i), Title: "record " + h[:12], Body: h}
	}
	body, err := json.Marshal(map[string]any{"job": in.Job, "records": recs})
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	back := d.cfg.CirculationURL
	if back == "" {
		if back, err = loopbackURL(r.Header.Get(OkapiURLHeader)); err != nil {
			writeJSONError(w, http.StatusBadRequest, OkapiURLHeader+": "+err.Error())
			return
		}
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, back+"/inventory/instances/batch", strings.NewReader(string(body)))
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Okapi-Token", r.Header.Get("X-Okapi-Token"))
	resp, err := d.client.Do(req)
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "inventory: "+failureKind(err))
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		writeJSONError(w, resp.StatusCode, "inventory: "+resp.Status)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]int{"created": in.Records})
}

// OkapiURLHeader tells a module the gateway's address (FOLIO's header).
const OkapiURLHeader = "X-Okapi-Url"

// loopbackURL checks that u is an http URL on a loopback address: the
// demo's modules never call anywhere else.
func loopbackURL(u string) (string, error) {
	b, err := baseURL(u)
	if err != nil {
		return "", err
	}
	p, _ := url.Parse(b)
	if ip := net.ParseIP(p.Hostname()); ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("%q is not a loopback address", u)
	}
	return b, nil
}
