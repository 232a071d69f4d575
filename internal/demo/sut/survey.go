package sut

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The survey service models reference study 002 (ohmage): teachers teach
// classes of students, students upload survey responses with a photo, and
// teachers browse the responses through a 13-call flow. Its data set is
// written by plateau datagen from the reference's data-volume model;
// SurveyModel is that model's arithmetic, as the reference did it by hand.

// SurveyModel is reference 002's data-volume model: Teachers in the first
// year plus NewTeachers each year, each teaching ClassesPerTeacher new
// classes a year of StudentsPerClass students, who answer SurveysPerDay
// surveys on Days days with probability SubmitProb; each survey has Prompts
// prompts, one of them a photo.
type SurveyModel struct {
	Years, Teachers, NewTeachers, ClassesPerTeacher, StudentsPerClass int
	Days, SurveysPerDay, Prompts                                      int
	SubmitProb                                                        float64
	PhotoBytes                                                        int // the photo plus its two scaled copies
}

// ReferenceSurveyModel is the reference's model (three years).
func ReferenceSurveyModel() SurveyModel {
	return SurveyModel{Years: 3, Teachers: 40, NewTeachers: 80, ClassesPerTeacher: 2, StudentsPerClass: 30,
		Days: 180, SurveysPerDay: 3, Prompts: 10, SubmitProb: 0.75, PhotoBytes: 104638}
}

// Counts are the model's volumes, as the reference's table lists them.
type SurveyCounts struct {
	Teachers, Classes, Students      int
	Responses, PromptResponses, Imgs int64
}

// Counts evaluates the model year by year with the reference's
// arithmetic: each year's teachers each teach ClassesPerTeacher new classes,
// classes and students accumulate, every student answers. Teachers counts
// teacher-years, as the reference's table does (40 + 120 + 200 = 360 over
// three years).
func (m SurveyModel) Counts() SurveyCounts {
	var c SurveyCounts
	teachers := m.Teachers
	for y := 1; y <= m.Years; y++ {
		if y > 1 {
			teachers += m.NewTeachers
		}
		c.Classes += teachers * m.ClassesPerTeacher
		c.Teachers += teachers
	}
	c.Students = c.Classes * m.StudentsPerClass
	perStudent := float64(m.Days*m.SurveysPerDay) * m.SubmitProb
	c.Responses = int64(float64(c.Students) * perStudent)
	c.PromptResponses = c.Responses * int64(m.Prompts)
	c.Imgs = c.Responses
	return c
}

// SurveyConfig configures the survey service.
type SurveyConfig struct {
	// DB is the SQLite file; on first start it is filled from DataDir.
	DB string
	// DataDir holds a data set written by plateau datagen from the
	// reference's model (examples/school-data/school.yaml): campaigns.csv,
	// teachers.csv, classes.csv, students.csv and responses.ndjson.
	DataDir string
	// Prompts are the prompt responses stored per survey response
	// (default 10, the reference's).
	Prompts int
	// Workers bounds the calls served at once (Tomcat's threads, default
	// 8); a call that waited longer than Timeout for a worker or in all is
	// answered 504 (nginx's timeout), default 5 s.
	Workers   int
	Timeout   time.Duration
	AccessLog string
}

// Survey serves the upload and the browse flow:
//
//	GET  /login.html, /index.html                         static pages
//	GET  /app/user/whoami, /app/config/read
//	POST /app/user/auth_token      form user, password → {"token"}
//	POST /app/user_info/read, /app/campaign/read, /app/class/read,
//	     /app/survey_response/read (form auth_token, user, campaign_urn, output=users|responses)
//	POST /app/survey/upload        multipart: user, password, surveys (JSON), images (a JPEG file)
//
// The data set comes from plateau datagen (SurveyConfig.DataDir).
type Survey struct {
	cfg    SurveyConfig
	db     *sql.DB
	access *logFile
	slots  chan struct{}
	signer tokenSigner
}

// NewSurvey opens the database, loading the data set when it is empty.
func NewSurvey(ctx context.Context, cfg SurveyConfig) (*Survey, error) {
	if cfg.DB == "" {
		return nil, errors.New("survey: no database file")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Prompts <= 0 {
		cfg.Prompts = 10
	}
	db, err := openSurveyDB(cfg.DB, cfg.Workers)
	if err != nil {
		return nil, err
	}
	s := &Survey{cfg: cfg, db: db, slots: make(chan struct{}, cfg.Workers), signer: tokenSigner{secret: []byte(newMessageID()), ttl: time.Hour}}
	if err := s.load(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("survey: loading the data set: %w", err)
	}
	if s.access, err = openLog(cfg.AccessLog, 0); err != nil {
		db.Close()
		return nil, fmt.Errorf("survey: %w", err)
	}
	return s, nil
}

func openSurveyDB(path string, conns int) (*sql.DB, error) {
	// Write transactions take the lock when they begin (and wait for it),
	// so a transaction never fails half-way on a concurrent writer.
	src, err := dsn(path, "_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", src)
	if err != nil {
		return nil, fmt.Errorf("survey: %w", err)
	}
	db.SetMaxOpenConns(conns)
	return db, nil
}

// LoadSurveyData fills the survey database at path from a datagen data
// set (what NewSurvey does on first start), for a caller that loads the
// data before it starts the service, as a test's preparation step does.
func LoadSurveyData(ctx context.Context, path, dataDir string) error {
	db, err := openSurveyDB(path, 1)
	if err != nil {
		return err
	}
	s := &Survey{cfg: SurveyConfig{DB: path, DataDir: dataDir, Prompts: 10}, db: db}
	return errors.Join(s.load(ctx), db.Close())
}

// csvRows reads dir/name (with a header) and calls fn with each row as a
// map of column → value; errors name the file and line.
func csvRows(dir, name string, fn func(line int, row map[string]string) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: header: %w", path, err)
	}
	row := map[string]string{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for i, h := range head {
			if i < len(rec) {
				row[h] = rec[i]
			}
		}
		if err := fn(line, row); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

// load fills an empty database from the data set: campaigns, teachers,
// classes, students and survey responses (each with its prompt responses).
func (s *Survey) load(ctx context.Context) error {
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS user (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, password TEXT NOT NULL, role TEXT NOT NULL, class INTEGER)`,
		`CREATE TABLE IF NOT EXISTS campaign (id INTEGER PRIMARY KEY, urn TEXT NOT NULL UNIQUE, name TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS class (id INTEGER PRIMARY KEY, teacher INTEGER NOT NULL, urn TEXT NOT NULL, campaign TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS survey_response (id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL, campaign TEXT NOT NULL, data TEXT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS survey_response_campaign ON survey_response (campaign, user_id)`,
		`CREATE TABLE IF NOT EXISTS prompt_response (response_id INTEGER NOT NULL, prompt INTEGER NOT NULL, value TEXT NOT NULL)`,
		`CREATE INDEX IF NOT EXISTS prompt_response_response ON prompt_response (response_id)`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM user`).Scan(&n); err != nil || n > 0 {
		return err
	}
	if s.cfg.DataDir == "" {
		return errors.New("the database is empty and no data set was given")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	dir := s.cfg.DataDir
	campaigns := map[string]string{} // campaign_id → urn
	if err := csvRows(dir, "campaigns.csv", func(_ int, r map[string]string) error {
		campaigns[r["campaign_id"]] = r["urn"]
		_, err := tx.ExecContext(ctx, `INSERT INTO campaign (id, urn, name) VALUES (?, ?, ?)`, r["campaign_id"], r["urn"], r["name"])
		return err
	}); err != nil {
		return err
	}
	teachers := map[string]int64{} // teacher_id → user id
	if err := csvRows(dir, "teachers.csv", func(_ int, r map[string]string) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO user (name, password, role) VALUES (?, ?, 'teacher')`, r["username"], r["password"])
		if err != nil {
			return err
		}
		teachers[r["teacher_id"]], _ = res.LastInsertId()
		return nil
	}); err != nil {
		return err
	}
	if err := csvRows(dir, "classes.csv", func(_ int, r map[string]string) error {
		t, ok := teachers[r["teacher_id"]]
		c, okc := campaigns[r["campaign_id"]]
		if !ok || !okc {
			return fmt.Errorf("class %s: unknown teacher %q or campaign %q", r["class_id"], r["teacher_id"], r["campaign_id"])
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO class (id, teacher, urn, campaign) VALUES (?, ?, ?, ?)`, r["class_id"], t, r["urn"], c)
		return err
	}); err != nil {
		return err
	}
	students := map[int64]int64{} // student_id → user id
	if err := csvRows(dir, "students.csv", func(_ int, r map[string]string) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO user (name, password, role, class) VALUES (?, ?, 'student', ?)`, r["username"], r["password"], r["class_id"])
		if err != nil {
			return err
		}
		id, _ := strconv.ParseInt(r["student_id"], 10, 64)
		students[id], _ = res.LastInsertId()
		return nil
	}); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dir, "responses.ndjson"))
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	insR, err := tx.PrepareContext(ctx, `INSERT INTO survey_response (id, user_id, campaign, data) VALUES (?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	for line := 1; sc.Scan(); line++ {
		var r struct {
			ResponseID int64  `json:"response_id"`
			StudentID  int64  `json:"student_id"`
			CampaignID *int64 `json:"campaign_id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("responses.ndjson:%d: %w", line, err)
		}
		u, ok := students[r.StudentID]
		if !ok || r.CampaignID == nil {
			return fmt.Errorf("responses.ndjson:%d: unknown student %d or no campaign", line, r.StudentID)
		}
		if _, err := insR.ExecContext(ctx, r.ResponseID, u, campaigns[strconv.FormatInt(*r.CampaignID, 10)], sc.Text()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("responses.ndjson: %w", err)
	}
	// Each response's prompt responses, made by the database in one
	// statement.
	if _, err := tx.ExecContext(ctx, `INSERT INTO prompt_response (response_id, prompt, value)
		WITH RECURSIVE n(p) AS (SELECT 1 UNION ALL SELECT p + 1 FROM n WHERE p < ?)
		SELECT r.id, n.p, CAST((r.id * 7 + n.p) % 5 AS TEXT) FROM survey_response r, n`, s.cfg.Prompts); err != nil {
		return err
	}
	return tx.Commit()
}

// Serve answers on ln until ctx ends.
func (s *Survey) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, withAccessLog(s.access, s.handler()), s.Close)
}

// Close closes the database and the log.
func (s *Survey) Close() error { return errors.Join(s.db.Close(), s.access.close()) }

func (s *Survey) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	page := func(title string) http.HandlerFunc {
		body := "<!doctype html><title>" + title + "</title><h1>" + title + "</h1>" + strings.Repeat("<p>ohmage</p>", 200)
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, body)
		}
	}
	mux.HandleFunc("GET /login.html", page("login"))
	mux.HandleFunc("GET /index.html", page("home"))
	mux.HandleFunc("GET /app/user/whoami", s.gated(s.whoami))
	mux.HandleFunc("GET /app/config/read", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"result": "success", "data": map[string]any{"application_name": "ohmage", "version": "2.16"}})
	})
	mux.HandleFunc("POST /app/user/auth_token", s.gated(s.authToken))
	mux.HandleFunc("POST /app/user_info/read", s.gated(s.authed(s.userInfo)))
	mux.HandleFunc("POST /app/campaign/read", s.gated(s.authed(s.campaigns)))
	mux.HandleFunc("POST /app/class/read", s.gated(s.authed(s.classes)))
	mux.HandleFunc("POST /app/survey_response/read", s.gated(s.authed(s.responses)))
	mux.HandleFunc("POST /app/survey/upload", s.gated(s.upload))
	return mux
}

// gated serves a call on one of Workers threads and answers 504 when the
// call took longer than Timeout in all (the proxy in front gave up; the
// work done stays done, as in the reference).
func (s *Survey) gated(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		t := time.NewTimer(s.cfg.Timeout)
		defer t.Stop()
		select {
		case s.slots <- struct{}{}:
		case <-t.C:
			writeJSONError(w, http.StatusGatewayTimeout, "timed out waiting for a worker")
			return
		case <-r.Context().Done():
			return
		}
		rec := &bufferedWriter{h: http.Header{}}
		h(rec, r)
		<-s.slots
		if time.Since(start) > s.cfg.Timeout {
			writeJSONError(w, http.StatusGatewayTimeout, "upstream timed out")
			return
		}
		rec.flush(w)
	}
}

// bufferedWriter holds a handler's answer until the gate lets it out.
type bufferedWriter struct {
	h      http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.h }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedWriter) WriteHeader(code int)        { b.status = code }
func (b *bufferedWriter) flush(w http.ResponseWriter) {
	for k, v := range b.h {
		w.Header()[k] = v
	}
	if b.status == 0 {
		b.status = http.StatusOK
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}

func (s *Survey) whoami(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"result": "success", "username": r.URL.Query().Get("user")})
}

// checkUser verifies a login against the user table.
func (s *Survey) checkUser(ctx context.Context, user, pw string) (int64, error) {
	var id int64
	var want string
	err := s.db.QueryRowContext(ctx, `SELECT id, password FROM user WHERE name = ?`, user).Scan(&id, &want)
	if err != nil || want != pw {
		return 0, errors.New("unknown user or wrong password")
	}
	return id, nil
}

func (s *Survey) authToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad form")
		return
	}
	if _, err := s.checkUser(r.Context(), r.PostForm.Get("user"), r.PostForm.Get("password")); err != nil {
		writeJSONError(w, http.StatusUnauthorized, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": "success", "token": s.signer.issue(r.PostForm.Get("user"), time.Now())})
}

// authed checks the form's token.
func (s *Survey) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad form")
			return
		}
		if _, err := s.signer.verify(r.PostForm.Get("auth_token"), time.Now()); err != nil {
			writeJSONError(w, http.StatusUnauthorized, "invalid token")
			return
		}
		h(w, r)
	}
}

func (s *Survey) queryRows(w http.ResponseWriter, r *http.Request, q string, args ...any) {
	rows, err := s.db.QueryContext(r.Context(), q, args...)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		out = append(out, [2]string{a, b})
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": "success", "data": out})
}

func (s *Survey) userInfo(w http.ResponseWriter, r *http.Request) {
	s.queryRows(w, r, `SELECT name, role FROM user WHERE name = ?`, r.PostForm.Get("user"))
}

// campaigns lists the campaigns of the user's classes, or with
// campaign_urn that campaign's definition.
func (s *Survey) campaigns(w http.ResponseWriter, r *http.Request) {
	if c := r.PostForm.Get("campaign_urn"); c != "" {
		s.queryRows(w, r, `SELECT urn, name FROM campaign WHERE urn = ?`, c)
		return
	}
	s.queryRows(w, r, `SELECT DISTINCT cl.campaign, cp.name FROM class cl JOIN campaign cp ON cp.urn = cl.campaign
		WHERE cl.teacher = (SELECT id FROM user WHERE name = ?) ORDER BY cl.campaign`, r.PostForm.Get("user"))
}

// classes lists the students of the user's classes in the campaign.
func (s *Survey) classes(w http.ResponseWriter, r *http.Request) {
	s.queryRows(w, r, `SELECT u.name, c.urn FROM user u JOIN class c ON c.id = u.class
		WHERE c.campaign = ? AND c.teacher = (SELECT id FROM user WHERE name = ?) ORDER BY u.name`, r.PostForm.Get("campaign_urn"), r.PostForm.Get("user"))
}

// responses is the heavy call: output=users lists who answered (a
// grouping over the campaign's responses), otherwise the responses with
// their prompts.
func (s *Survey) responses(w http.ResponseWriter, r *http.Request) {
	c := r.PostForm.Get("campaign_urn")
	if r.PostForm.Get("output") == "users" {
		s.queryRows(w, r, `SELECT u.name, CAST(COUNT(*) AS TEXT) FROM survey_response sr JOIN user u ON u.id = sr.user_id
			JOIN prompt_response p ON p.response_id = sr.id WHERE sr.campaign = ? GROUP BY u.name ORDER BY u.name`, c)
		return
	}
	s.queryRows(w, r, `SELECT CAST(sr.id AS TEXT), group_concat(p.value, ',') FROM survey_response sr JOIN prompt_response p ON p.response_id = sr.id
		WHERE sr.campaign = ? GROUP BY sr.id ORDER BY sr.id LIMIT 500`, c)
}

// upload stores one survey response with its prompts and its photo's two
// scaled copies (decoded and re-encoded: the reference's image handling).
func (s *Survey) upload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		writeJSONError(w, http.StatusBadRequest, "want multipart/form-data: "+err.Error())
		return
	}
	defer r.MultipartForm.RemoveAll()
	uid, err := s.checkUser(r.Context(), r.FormValue("user"), r.FormValue("password"))
	if err != nil {
		writeJSONError(w, http.StatusUnauthorized, err.Error())
		return
	}
	var surveys []map[string]any
	if err := json.Unmarshal([]byte(r.FormValue("surveys")), &surveys); err != nil || len(surveys) == 0 {
		writeJSONError(w, http.StatusBadRequest, "surveys: want a JSON array of responses")
		return
	}
	f, _, err := r.FormFile("images")
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "images: a photo file is required")
		return
	}
	img, err := jpeg.Decode(f)
	f.Close()
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "images: not a JPEG: "+err.Error())
		return
	}
	var stored int
	for _, div := range []int{4, 8} {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, scaleDown(img, div), &jpeg.Options{Quality: 75}); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
		stored += b.Len()
	}
	var campaign string
	if err := s.db.QueryRowContext(r.Context(), `SELECT c.campaign FROM user u JOIN class c ON c.id = u.class WHERE u.id = ?`, uid).Scan(&campaign); err != nil {
		writeJSONError(w, http.StatusBadRequest, "the user is in no class")
		return
	}
	tx, err := s.db.BeginTx(r.Context(), nil)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer tx.Rollback()
	data, _ := json.Marshal(surveys[0])
	res, err := tx.ExecContext(r.Context(), `INSERT INTO survey_response (user_id, campaign, data) VALUES (?, ?, ?)`, uid, campaign, string(data))
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	id, _ := res.LastInsertId()
	for p := 1; p <= s.cfg.Prompts; p++ {
		if _, err := tx.ExecContext(r.Context(), `INSERT INTO prompt_response (response_id, prompt, value) VALUES (?, ?, ?)`, id, p, "uploaded"); err != nil {
			writeJSONError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if err := tx.Commit(); err != nil {
		writeJSONError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": "success", "id": id, "image_bytes": stored})
}

// scaleDown returns img shrunk by div (nearest neighbour).
func scaleDown(img image.Image, div int) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, max(b.Dx()/div, 1), max(b.Dy()/div, 1)))
	for y := range out.Bounds().Dy() {
		for x := range out.Bounds().Dx() {
			out.Set(x, y, img.At(b.Min.X+x*div, b.Min.Y+y*div))
		}
	}
	return out
}

// SurveyPhoto returns a deterministic JPEG photo of about the given size
// (a noisy gradient: photographs do not compress much).
func SurveyPhoto(seed uint64, approxBytes int) ([]byte, error) {
	r := rand.New(rand.NewPCG(seed, 3))
	side := 64
	for {
		img := image.NewRGBA(image.Rect(0, 0, side, side))
		for y := range side {
			for x := range side {
				img.Set(x, y, color.RGBA{uint8(x*255/side) ^ uint8(r.IntN(64)), uint8(y*255/side) ^ uint8(r.IntN(64)), uint8(r.IntN(256)), 255})
			}
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
			return nil, err
		}
		if b.Len() >= approxBytes || side >= 2048 {
			return b.Bytes(), nil
		}
		side = side * 3 / 2
	}
}
