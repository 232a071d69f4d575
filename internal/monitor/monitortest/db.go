package monitortest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sharedDir makes a directory a service user can reach (t.TempDir is
// private to the test's user), owned by that user when we are root; it is
// removed when the test ends.
func sharedDir(t testing.TB, owner string) (dir string, asUser []string) {
	t.Helper()
	root, err := os.MkdirTemp("", "plateau-db-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup(owner)
		if err != nil {
			t.Fatalf("running as root needs the %s user (from its package): %v", owner, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(root, uid, gid); err != nil {
			t.Fatal(err)
		}
		asUser = []string{"runuser", "-u", owner, "--"}
	}
	return root, asUser
}

func run(t testing.TB, asUser []string, args ...string) {
	t.Helper()
	cmd := append(append([]string{}, asUser...), args...)
	out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
	}
}

// Postgres initialises and starts a throw-away PostgreSQL cluster (Debian
// packages) on a loopback port with pg_stat_statements preloaded and
// created, and returns a DSN for the postgres superuser.
func Postgres(t testing.TB) string {
	t.Helper()
	return StartPostgres(t).DSN
}

// PostgresServer is a throw-away PostgreSQL cluster on loopback.
type PostgresServer struct {
	// DSN connects as the postgres superuser.
	DSN string
	// MaxConnections is the server's max_connections.
	MaxConnections int

	bin, root, data, log, port string
	as                         []string // runuser prefix when we are root
}

// StartPostgres is Postgres returning the server, to stop and start it
// again mid-test.
func StartPostgres(t testing.TB) *PostgresServer {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		Need(t, "initdb") // skips, or fails under CI
	}
	sort.Strings(bins)
	s := &PostgresServer{bin: filepath.Dir(bins[len(bins)-1]), MaxConnections: 40}
	s.root, s.as = sharedDir(t, "postgres")
	s.data, s.log = filepath.Join(s.root, "data"), filepath.Join(s.root, "pg.log")
	s.port = FreeAddr(t)[len("127.0.0.1:"):]
	run(t, s.as, filepath.Join(s.bin, "initdb"), "-D", s.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
	s.Start(t)
	t.Cleanup(func() { s.pgctl("immediate") })
	run(t, s.as, filepath.Join(s.bin, "psql"), "-h", "127.0.0.1", "-p", s.port, "-U", "postgres", "-d", "postgres", "-q", "-c", "CREATE EXTENSION pg_stat_statements")
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%s/postgres?sslmode=disable", s.port)
	return s
}

// Start starts the server (again, after Stop) on its port and waits until
// it accepts connections.
func (s *PostgresServer) Start(t testing.TB) {
	t.Helper()
	opts := fmt.Sprintf("-p %s -k %s -c listen_addresses=127.0.0.1 -c shared_preload_libraries=pg_stat_statements -c fsync=off -c max_connections=%d",
		s.port, s.root, s.MaxConnections)
	cmd := append(append([]string{}, s.as...), filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-l", s.log, "-w", "-t", "60", "-o", opts, "start")
	if out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(s.log)
		t.Fatalf("%s: %v\n%s\n%s", strings.Join(cmd, " "), err, out, log)
	}
}

// Stop shuts the server down (fast mode: sessions are disconnected) and
// waits until it is down.
func (s *PostgresServer) Stop() { s.pgctl("fast") }

func (s *PostgresServer) pgctl(mode string) {
	cmd := append(append([]string{}, s.as...), filepath.Join(s.bin, "pg_ctl"), "-D", s.data, "-m", mode, "-w", "stop")
	_ = exec.Command(cmd[0], cmd[1:]...).Run()
}

// PostgresExporter starts Debian's prometheus-postgres-exporter against
// dsn and returns its host:port.
func PostgresExporter(t testing.TB, dsn string) string {
	t.Helper()
	bin := Need(t, "prometheus-postgres-exporter")
	addr := FreeAddr(t)
	t.Setenv("DATA_SOURCE_NAME", dsn)
	Start(t, "http://"+addr+"/metrics", bin, "--web.listen-address="+addr, "--log.level=warn")
	return addr
}

// MariaDB is a throw-away MariaDB server on loopback.
type MariaDB struct {
	// Addr is 127.0.0.1:port.
	Addr string
	// User and Password may connect over TCP from 127.0.0.1 with every
	// privilege.
	User, Password string
}

// DSN is the go-sql-driver/mysql DSN of the server's account.
func (m *MariaDB) DSN() string {
	return fmt.Sprintf("%s:%s@tcp(%s)/", m.User, m.Password, m.Addr)
}

// StartMariaDB initialises and starts a MariaDB server (Debian
// mariadb-server) with performance_schema on, and creates an account for
// the tests.
func StartMariaDB(t testing.TB) *MariaDB {
	t.Helper()
	server := Need(t, "mariadbd")
	install := Need(t, "mariadb-install-db")
	client := Need(t, "mariadb")
	root, as := sharedDir(t, "mysql")
	data, sock := filepath.Join(root, "data"), filepath.Join(root, "mysqld.sock")
	args := []string{install, "--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=socket", "--skip-test-db"}
	if len(as) > 0 {
		args = append(args, "--user=mysql")
	}
	run(t, nil, args...)
	if len(as) > 0 {
		run(t, nil, "chown", "-R", "mysql:mysql", data)
	}
	addr := FreeAddr(t)
	sargs := []string{"--no-defaults", "--datadir=" + data, "--socket=" + sock, "--port=" + addr[len("127.0.0.1:"):],
		"--bind-address=127.0.0.1", "--skip-name-resolve", "--performance-schema=ON", "--innodb-buffer-pool-size=32M",
		"--innodb-log-file-size=16M", "--skip-log-bin", "--pid-file=" + filepath.Join(root, "mysqld.pid"),
		"--log-error=" + filepath.Join(root, "error.log"), "--slow-query-log=ON", "--long-query-time=0.25"}
	if len(as) > 0 {
		sargs = append(sargs, "--user=mysql")
	}
	Start(t, "", server, sargs...)
	m := &MariaDB{Addr: addr, User: "plateau", Password: "plateau-test"}
	sql := fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'; GRANT ALL ON *.* TO '%s'@'127.0.0.1'; CREATE DATABASE app;",
		m.User, m.Password, m.User)
	var last []byte
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command(client, "--no-defaults", "-S", sock, "-u", "root", "-e", sql).CombinedOutput()
		if err == nil {
			return m
		}
		last = out
	}
	logb, _ := os.ReadFile(filepath.Join(root, "error.log"))
	t.Fatalf("MariaDB did not accept the setup: %s\n%s", last, logb)
	return nil
}

// MysqldExporter starts Debian's prometheus-mysqld-exporter against m and
// returns its host:port.
func MysqldExporter(t testing.TB, m *MariaDB) string {
	t.Helper()
	bin := Need(t, "prometheus-mysqld-exporter")
	addr := FreeAddr(t)
	t.Setenv("DATA_SOURCE_NAME", fmt.Sprintf("%s:%s@(%s)/", m.User, m.Password, m.Addr))
	Start(t, "http://"+addr+"/metrics", bin, "--web.listen-address="+addr, "--log.level=warn")
	return addr
}
