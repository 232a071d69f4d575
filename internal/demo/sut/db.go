package sut

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// schemaVersion changes whenever the schema or the generator changes, so an
// old database file is regenerated instead of silently reused.
const schemaVersion = "1"

// metaTable marks a file as a plateau demo database and records what it was
// generated from. Its distinctive name is how PrepareDB refuses to overwrite a
// file that is not its own.
const metaTable = "plateau_demo_meta"

// allergyStream separates the allergy random stream from the CPR stream.
const allergyStream = 0xA11E46

// ErrNotFound is returned by a back read for a CPR the database does not hold.
var ErrNotFound = errors.New("patient not found")

// Allergy is one allergy registration, a reduced FHIR AllergyIntolerance.
type Allergy struct {
	ID          int64  `json:"id"`
	Substance   string `json:"substance"`
	Category    string `json:"category"`    // food, medication, environment
	Criticality string `json:"criticality"` // low, high, unable-to-assess
	Status      string `json:"status"`      // active, inactive, resolved
	Recorded    string `json:"recorded"`    // date recorded, YYYY-MM-DD
}

// AllergyList is a patient's allergies, the JSON body the back answers and the
// front passes on.
type AllergyList struct {
	CPR       string    `json:"cpr"`
	Allergies []Allergy `json:"allergies"`
}

// substances are the allergens drawn from, with their category. Read-only.
var substances = [...]struct{ name, category string }{
	{"Penicillin", "medication"}, {"Amoxicillin", "medication"},
	{"Sulfonamide", "medication"}, {"Ibuprofen", "medication"},
	{"Acetylsalicylic acid", "medication"}, {"Codeine", "medication"},
	{"Iodinated contrast", "medication"}, {"Peanut", "food"},
	{"Hazelnut", "food"}, {"Shellfish", "food"}, {"Hen's egg", "food"},
	{"Cow's milk", "food"}, {"Wheat", "food"}, {"Birch pollen", "environment"},
	{"Grass pollen", "environment"}, {"House dust mite", "environment"},
	{"Cat dander", "environment"}, {"Latex", "environment"},
	{"Bee venom", "environment"}, {"Nickel", "environment"},
}

// PrepareDB makes sure path holds the demo database for (seed, patients): it
// reuses an existing file whose marker matches and otherwise generates one,
// reporting whether it generated. Generation writes a temporary file in the
// same folder and renames it into place, so concurrent callers (two back
// instances sharing one file) and interrupted runs never see a half-written
// database. A file at path that is not a plateau demo database is an error,
// never overwritten.
//
// Each patient gets 1–4 allergy registrations; with the default 50,000
// patients generation takes a few seconds.
func PrepareDB(ctx context.Context, path string, seed int64, patients int) (created bool, err error) {
	if path == "" {
		return false, errors.New("preparing demo database: empty path")
	}
	if patients <= 0 {
		return false, fmt.Errorf("preparing demo database %s: patients must be positive, got %d", path, patients)
	}
	ok, err := dbMatches(ctx, path, seed, patients)
	if err != nil {
		return false, fmt.Errorf("preparing demo database: %w", err)
	}
	if ok {
		return false, nil
	}
	if err := generateDB(ctx, path, seed, patients); err != nil {
		return false, fmt.Errorf("generating demo database %s: %w", path, err)
	}
	return true, nil
}

// dsn turns a file path into a SQLite URI with the given query.
func dsn(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: query}).String(), nil
}

// dbMatches reports whether path is a demo database generated for (seed,
// patients). A missing or empty file does not match; a file without the
// marker table is an error.
func dbMatches(ctx context.Context, path string, seed int64, patients int) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && st.Size() == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	src, err := dsn(path, "mode=ro")
	if err != nil {
		return false, err
	}
	db, err := sql.Open("sqlite", src)
	if err != nil {
		return false, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", metaTable).Scan(&n); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	if n == 0 {
		return false, fmt.Errorf("%s exists and is not a plateau demo database; remove it or choose another path", path)
	}
	want := map[string]string{
		"schema":   schemaVersion,
		"seed":     strconv.FormatInt(seed, 10),
		"patients": strconv.Itoa(patients),
	}
	rows, err := db.QueryContext(ctx, "SELECT key, value FROM "+metaTable)
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	defer rows.Close()
	got := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return false, fmt.Errorf("reading %s: %w", path, err)
		}
		got[k] = v
	}
	if err := rows.Err(); err != nil {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	for k, v := range want {
		if got[k] != v {
			return false, nil
		}
	}
	return true, nil
}

// generateDB writes the database for (seed, patients) to a temporary file
// and renames it to path. Everything happens in one transaction with
// prepared statements and the journal off, and the indexes are built after the
// rows, which is what keeps 50,000 patients within a few seconds.
func generateDB(ctx context.Context, path string, seed int64, patients int) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	if err := tmp.Close(); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmpPath) // best effort: the error already says what failed
		}
	}()
	src, err := dsn(tmpPath, "_pragma=journal_mode(OFF)&_pragma=synchronous(OFF)")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", src)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(1)
	if err := fillDB(ctx, db, seed, patients); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	return os.Rename(tmpPath, path)
}

// fillDB creates the schema and the rows.
func fillDB(ctx context.Context, db *sql.DB, seed int64, patients int) error {
	schema := []string{
		`CREATE TABLE patient (id INTEGER PRIMARY KEY, cpr TEXT NOT NULL)`,
		`CREATE TABLE allergy (
			id          INTEGER PRIMARY KEY,
			patient_id  INTEGER NOT NULL REFERENCES patient(id),
			substance   TEXT NOT NULL,
			category    TEXT NOT NULL,
			criticality TEXT NOT NULL,
			status      TEXT NOT NULL,
			recorded    TEXT NOT NULL)`,
		`CREATE TABLE ` + metaTable + ` (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	}
	for _, s := range schema {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("creating schema: %w", err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // no-op after Commit
	insPatient, err := tx.PrepareContext(ctx, `INSERT INTO patient (id, cpr) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer insPatient.Close()
	insAllergy, err := tx.PrepareContext(ctx, `INSERT INTO allergy
		(patient_id, substance, category, criticality, status, recorded) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer insAllergy.Close()

	r := rand.New(rand.NewPCG(uint64(seed), allergyStream))
	epoch := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int(time.Date(2019, 5, 13, 0, 0, 0, 0, time.UTC).Sub(epoch).Hours() / 24)
	var picked [4]int
	for i, cpr := range CPRs(seed, patients) {
		id := int64(i + 1)
		if _, err := insPatient.ExecContext(ctx, id, cpr); err != nil {
			return fmt.Errorf("inserting patient: %w", err)
		}
		k := 1 + r.IntN(len(picked))
		for j := 0; j < k; j++ {
			s := pickDistinct(r, picked[:j], len(substances))
			picked[j] = s
			crit := "low"
			switch x := r.IntN(10); {
			case x >= 9:
				crit = "unable-to-assess"
			case x >= 6:
				crit = "high"
			}
			status := "active"
			switch x := r.IntN(10); {
			case x >= 9:
				status = "resolved"
			case x >= 8:
				status = "inactive"
			}
			recorded := epoch.AddDate(0, 0, r.IntN(span)).Format(time.DateOnly)
			if _, err := insAllergy.ExecContext(ctx, id, substances[s].name, substances[s].category, crit, status, recorded); err != nil {
				return fmt.Errorf("inserting allergy: %w", err)
			}
		}
	}
	post := []string{
		// Both lookups of a read go through an index: O(log n).
		`CREATE UNIQUE INDEX patient_cpr ON patient (cpr)`,
		`CREATE INDEX allergy_patient ON allergy (patient_id)`,
	}
	for _, s := range post {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("creating index: %w", err)
		}
	}
	for _, kv := range [][2]string{
		{"schema", schemaVersion},
		{"seed", strconv.FormatInt(seed, 10)},
		{"patients", strconv.Itoa(patients)},
	} {
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+metaTable+` (key, value) VALUES (?, ?)`, kv[0], kv[1]); err != nil {
			return fmt.Errorf("writing marker: %w", err)
		}
	}
	return tx.Commit()
}

// pickDistinct draws an index in [0, n) not in taken.
func pickDistinct(r *rand.Rand, taken []int, n int) int {
	for {
		s := r.IntN(n)
		dup := false
		for _, t := range taken {
			if t == s {
				dup = true
				break
			}
		}
		if !dup {
			return s
		}
	}
}

// readQuery fetches a patient's allergies through the cpr index and the
// allergy patient_id index. The LEFT JOIN tells "unknown patient" (no row)
// from "patient without allergies" (one row of NULLs).
const readQuery = `SELECT p.id, a.id, a.substance, a.category, a.criticality, a.status, a.recorded
FROM patient p LEFT JOIN allergy a ON a.patient_id = p.id
WHERE p.cpr = ? ORDER BY a.id`

// store is the back's read-only handle on the database. Safe for concurrent
// use.
type store struct {
	db   *sql.DB
	read *sql.Stmt
}

// openStore opens path read-only with up to conns connections.
func openStore(path string, conns int) (*store, error) {
	src, err := dsn(path, "mode=ro")
	if err != nil {
		return nil, fmt.Errorf("opening demo database: %w", err)
	}
	db, err := sql.Open("sqlite", src)
	if err != nil {
		return nil, fmt.Errorf("opening demo database %s: %w", path, err)
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	read, err := db.Prepare(readQuery)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("opening demo database %s: %w", path, err)
	}
	return &store{db: db, read: read}, nil
}

// allergies returns cpr's allergies, or ErrNotFound.
func (s *store) allergies(ctx context.Context, cpr string) (AllergyList, error) {
	out := AllergyList{CPR: cpr, Allergies: []Allergy{}}
	rows, err := s.read.QueryContext(ctx, cpr)
	if err != nil {
		return out, fmt.Errorf("reading allergies: %w", err)
	}
	defer rows.Close()
	found := false
	for rows.Next() {
		found = true
		var pid int64
		var id sql.NullInt64
		var sub, cat, crit, st, rec sql.NullString
		if err := rows.Scan(&pid, &id, &sub, &cat, &crit, &st, &rec); err != nil {
			return out, fmt.Errorf("reading allergies: %w", err)
		}
		if !id.Valid {
			continue // patient without allergies
		}
		out.Allergies = append(out.Allergies, Allergy{
			ID: id.Int64, Substance: sub.String, Category: cat.String,
			Criticality: crit.String, Status: st.String, Recorded: rec.String,
		})
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("reading allergies: %w", err)
	}
	if !found {
		return out, ErrNotFound
	}
	return out, nil
}

// close releases the statement and the connections.
func (s *store) close() error {
	return errors.Join(s.read.Close(), s.db.Close())
}
