package audittest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBinEnv names an environment variable that, when set, is the directory
// holding initdb and postgres; it is tried before any other place.
const PgBinEnv = "AUDITTEST_PGBIN"

// ErrNoPostgres says no PostgreSQL server binaries were found.
var ErrNoPostgres = errors.New("audittest: PostgreSQL server binaries (initdb, postgres) not found in $" + PgBinEnv +
	", PATH, /usr/lib/postgresql/*/bin, /usr/local/bin or /usr/local/pgsql/bin; install PostgreSQL " +
	"(Debian/Ubuntu: apt-get install -y postgresql) or point $" + PgBinEnv + " at its bin directory")

// How long the server may take to come up and to shut down.
const (
	pgStartTimeout = 60 * time.Second
	pgStopTimeout  = 15 * time.Second
)

// FindPostgres returns the directory holding both initdb and postgres,
// searched in $AUDITTEST_PGBIN, PATH, /usr/lib/postgresql/*/bin (newest
// version first), /usr/local/bin and /usr/local/pgsql/bin. It returns
// ErrNoPostgres if none has both.
func FindPostgres() (string, error) {
	var dirs []string
	if d := os.Getenv(PgBinEnv); d != "" {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, filepath.SplitList(os.Getenv("PATH"))...)
	dirs = append(dirs, systemPgDirs()...)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", ErrNoPostgres
}

// systemPgDirs lists the usual install places, newest versioned one first
// (a variable so tests can pretend nothing is installed).
var systemPgDirs = func() []string {
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(versioned, func(a, b string) int { // newest major first: 9.6 < 10 < 15
		return compareVersion(filepath.Base(filepath.Dir(b)), filepath.Base(filepath.Dir(a)))
	})
	return append(versioned, "/usr/local/bin", "/usr/local/pgsql/bin")
}

func compareVersion(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// StartPostgres starts a throwaway PostgreSQL server for this process: a
// fresh cluster (initdb, trust auth, superuser "postgres") in a temporary
// directory, listening on 127.0.0.1 at a free port (and a unix socket in that
// directory), durability switched off for speed. It waits until the server
// accepts connections, creates the database "audit" and returns its DSN
// (postgres://postgres@127.0.0.1:PORT/audit?sslmode=disable).
//
// PostgreSQL refuses to run as root; when this process is root the server
// runs as the user "postgres" if it exists, else "nobody", in a temporary
// directory chowned to it.
//
// stop shuts the server down (SIGINT, bounded wait, then SIGKILL) and
// removes the directory; it is safe to call more than once. Without
// PostgreSQL binaries the error is ErrNoPostgres.
func StartPostgres(ctx context.Context) (dsn string, stop func() error, err error) {
	srv, err := StartServer(ctx)
	if err != nil {
		return "", nil, err
	}
	return srv.DSN, srv.Stop, nil
}

// Server is a throwaway PostgreSQL server (see StartPostgres) that can also
// be restarted, as an operator restarts a database under its clients.
type Server struct {
	// DSN is the "audit" database's.
	DSN string
	s   *pgServer
	mu  sync.Mutex // one Restart or Stop at a time
}

// StartServer starts a throwaway server as StartPostgres does.
func StartServer(ctx context.Context) (*Server, error) {
	bin, err := FindPostgres()
	if err != nil {
		return nil, err
	}
	s := &pgServer{bin: bin}
	fail := func(err error) (*Server, error) {
		_ = s.stop()
		return nil, err
	}
	if err := s.prepare(); err != nil {
		return fail(err)
	}
	if err := s.initdb(ctx); err != nil {
		return fail(err)
	}
	var admin string
	for attempt := 1; ; attempt++ {
		// Another process may grab the free port before the server binds
		// it; the server then exits and we retry on a new one.
		if admin, err = s.start(ctx, 0); err == nil {
			break
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return fail(err)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	dsn, err := CreateDatabase(cctx, admin, "audit")
	if err != nil {
		return fail(err)
	}
	return &Server{DSN: dsn, s: s}, nil
}

// Restart shuts the server down ("fast": open transactions rolled back,
// every client connection closed), keeps it down for down, and starts it
// again on the same port over the same data: what a database restart is to
// its clients. It returns once the server accepts connections again.
func (srv *Server) Restart(ctx context.Context, down time.Duration) error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if err := srv.s.shutdown(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	_, err := srv.s.start(ctx, srv.s.port)
	return err
}

// Stop shuts the server down and removes its directory; it is safe to call
// more than once.
func (srv *Server) Stop() error {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.s.stop()
}

var errPortTaken = errors.New("audittest: postgres port already in use")

type pgServer struct {
	bin  string
	dir  string // temporary root, owned by the server's user
	data string
	cred *syscall.Credential // nil unless we run as root

	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
	logPath string
	port    int

	stopOnce sync.Once
	stopErr  error
}

func (s *pgServer) prepare() error {
	base := os.TempDir()
	if os.Geteuid() == 0 {
		cred, err := unprivileged()
		if err != nil {
			return err
		}
		s.cred = cred
		if !worldTraversable(base) {
			base = "/tmp"
		}
	}
	dir, err := os.MkdirTemp(base, "audittest-pg-")
	if err != nil {
		return fmt.Errorf("audittest: temp dir: %w", err)
	}
	s.dir = dir
	s.data = filepath.Join(dir, "data")
	s.logPath = filepath.Join(dir, "postgres.log")
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("audittest: chmod %s: %w", dir, err)
	}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return fmt.Errorf("audittest: chown %s: %w", dir, err)
		}
	}
	return nil
}

// unprivileged picks the user the server runs as when we are root.
func unprivileged() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, errors.New(`audittest: running as root and neither user "postgres" nor "nobody" exists to run PostgreSQL as`)
}

// worldTraversable reports whether every directory from dir up to / can be
// entered by other users.
func worldTraversable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

// command prepares one of the server binaries: run in the temporary
// directory, as the unprivileged user when we are root, in its own process
// group, with a C locale and no PG* variables from our environment.
func (s *pgServer) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.dir
	env := []string{"LC_ALL=C", "LANG=C"}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	return cmd
}

func (s *pgServer) initdb(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStartTimeout)
	defer cancel()
	cmd := s.command(ctx, "initdb", "-D", s.data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("audittest: %s failed: %w\n%s", cmd, err, out)
	}
	return nil
}

// start runs the server on port (0: a free one) and waits until it accepts
// connections; it returns the DSN of its "postgres" database. On error the
// server may still run; stop ends it.
func (s *pgServer) start(ctx context.Context, port int) (string, error) {
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return "", err
		}
	}
	s.port = port
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return "", fmt.Errorf("audittest: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	// Not CommandContext: the server outlives ctx, stop ends it.
	cmd := s.command(context.Background(), "postgres", "-D", s.data, "-k", s.dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = logf, logf
	// If this process dies without calling stop, the server shuts down too.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("audittest: start %s: %w", cmd, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() { s.waitErr = cmd.Wait(); close(exited) }()

	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", port)
	deadline := time.NewTimer(pgStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(pctx, admin)
		if err == nil {
			err = conn.Ping(pctx)
			_ = conn.Close(context.Background())
		}
		cancel()
		if err == nil {
			return admin, nil
		}
		select {
		case <-exited:
			log := s.logTail()
			if strings.Contains(log, "could not bind") || strings.Contains(log, "already in use") {
				return "", fmt.Errorf("%w (port %d)", errPortTaken, port)
			}
			return "", fmt.Errorf("audittest: postgres exited during startup (%v); log:\n%s", s.waitErr, log)
		case <-deadline.C:
			return "", fmt.Errorf("audittest: postgres did not accept connections within %s (last error: %v); log:\n%s",
				pgStartTimeout, err, s.logTail())
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
	}
}

func (s *pgServer) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// shutdown stops the server if it runs ("fast" shutdown), keeping its data.
func (s *pgServer) shutdown() error {
	if s.cmd == nil {
		return nil
	}
	select {
	case <-s.exited:
		return nil
	default:
	}
	// SIGINT: "fast" shutdown, rolls back open transactions.
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
		return nil
	case <-time.After(pgStopTimeout):
		// Kill the server's own process group (its backends included).
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		return fmt.Errorf("audittest: postgres ignored SIGINT for %s; killed. log:\n%s", pgStopTimeout, s.logTail())
	}
}

// stop shuts the server down (if it runs) and removes its directory.
func (s *pgServer) stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if err := s.shutdown(); err != nil {
			errs = append(errs, err)
		}
		if s.dir != "" {
			if err := os.RemoveAll(s.dir); err != nil {
				errs = append(errs, fmt.Errorf("audittest: remove %s: %w", s.dir, err))
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("audittest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
