package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the processes this package starts: with
// fakeRole set, it plays the fixture, mcplocal, an idle process or the
// conformance suite's runner instead of running tests. The variables below
// say how it behaves; the tests set them, and the child inherits them.
const (
	fakeRole = "MCPCHAOS_CONFORMANCE_FAKE_ROLE" // fixture, mcplocal, idle, runner
	// fakeStarts names a file each fixture or mcplocal start appends a line
	// to; while it holds fewer lines than fakeTaken, the start fails as a
	// port another process took.
	fakeStarts = "MCPCHAOS_CONFORMANCE_FAKE_STARTS"
	fakeTaken  = "MCPCHAOS_CONFORMANCE_FAKE_TAKEN"
	// fakeFail makes a start fail otherwise, with this text.
	fakeFail = "MCPCHAOS_CONFORMANCE_FAKE_FAIL"
	// fakeNoPrefix makes mcplocal reject a config that sets prefix.
	fakeNoPrefix = "MCPCHAOS_CONFORMANCE_FAKE_NO_PREFIX"
	// fakePID names a file the idle process writes its pid to.
	fakePID = "MCPCHAOS_CONFORMANCE_FAKE_PID"
	// fakeRun is how the runner behaves: complete, cut, crash, garbage,
	// cut-orphan, garbage-ok, bad-checks.
	fakeRun = "MCPCHAOS_CONFORMANCE_FAKE_RUN"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(fakeRole); role != "" {
		os.Exit(fake(role, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fake plays role with args and returns its exit code.
func fake(role string, args []string) int {
	switch role {
	case "fixture", "mcplocal":
		if f := os.Getenv(fakeStarts); f != "" {
			b, _ := os.ReadFile(f)
			starts := strings.Count(string(b), "\n")
			_ = os.WriteFile(f, append(b, []byte(strings.Join(args, " ")+"\n")...), 0o644)
			if taken, _ := strconv.Atoi(os.Getenv(fakeTaken)); starts < taken {
				fmt.Println("listen tcp: bind: address already in use")
				return 1
			}
		}
		if msg := os.Getenv(fakeFail); msg != "" {
			fmt.Println(msg)
			return 2
		}
		addr := ""
		if role == "fixture" { // -http ADDR -stateless=false
			addr = args[1]
		} else { // serve --config FILE
			cfg, err := os.ReadFile(args[2])
			if err != nil {
				fmt.Println(err)
				return 2
			}
			if os.Getenv(fakeNoPrefix) != "" && strings.Contains(string(cfg), "prefix:") {
				fmt.Println(`config: projects.everything: field prefix not found`)
				return 2
			}
			for _, l := range strings.Split(string(cfg), "\n") {
				if v, ok := strings.CutPrefix(l, "listen: "); ok {
					addr = v
				}
			}
		}
		fmt.Println(role, "serving on", addr)
		err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
		fmt.Println(err)
		return 1
	case "idle":
		_ = os.WriteFile(os.Getenv(fakePID), []byte(strconv.Itoa(os.Getpid())), 0o644)
		fmt.Println("idle")
		return untilTerminated()
	case "runner":
		return fakeRunner(args)
	}
	return 3
}

// untilTerminated blocks until the process is sent SIGTERM (a SIGKILL
// ends it anyway).
func untilTerminated() int {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM)
	<-c
	return 1
}

// fakeRunner plays `conformance server --url URL -o DIR` over the three
// scenarios of completeRun, as fakeRun says.
func fakeRunner(args []string) int {
	wd, _ := os.Getwd()
	fmt.Printf("args: %s\ncwd: %s\nNO_COLOR=%s\n", strings.Join(args, " "), wd, os.Getenv("NO_COLOR"))
	out := args[len(args)-1]
	checks := func(scenario, body string) {
		d := filepath.Join(out, "server-"+scenario+"-2026-12-01T03-56-22-756Z")
		_ = os.MkdirAll(d, 0o755)
		_ = os.WriteFile(filepath.Join(d, "checks.json"), []byte(body), 0o644)
	}
	head := completeRun[:strings.Index(completeRun, "=== SUMMARY")]
	switch os.Getenv(fakeRun) {
	case "complete":
		checks("ping", `[{"name":"Ping","status":"FAILURE","errorMessage":"no pong"}]`)
		fmt.Print(completeRun)
		return 1 // the suite exits 1 when a check failed
	case "bad-checks":
		checks("ping", `[{"name":`)
		fmt.Print(completeRun)
		return 0
	case "cut":
		checks("server-initialize", `[{"name":"Init","status":"SUCCESS"}]`)
		fmt.Print(head)
		return untilTerminated()
	case "cut-orphan":
		// A child of the runner that keeps the output open after the
		// runner is killed, as a stray node process would.
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), fakeRole+"=idle")
		child.Stdout, child.Stderr = os.Stdout, os.Stderr
		if err := child.Start(); err != nil {
			fmt.Println(err)
			return 5
		}
		fmt.Print(head)
		return untilTerminated()
	case "crash":
		fmt.Print(head)
		return 3
	case "garbage":
		fmt.Println("npm error could not determine executable to run")
		return 1
	case "garbage-ok":
		fmt.Println("nothing to see")
		return 0
	}
	return 4
}

// fakeSuite is a Suite whose runner is the test binary, with a `node` on
// PATH that is not Node.js: nothing of npm runs.
func fakeSuite(t *testing.T, run string) Suite {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := Suite{Dir: t.TempDir()}
	if err := os.MkdirAll(filepath.Dir(s.Bin()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, s.Bin()); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(path, "node")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", path)
	t.Setenv(fakeRole, "runner")
	t.Setenv(fakeRun, run)
	return s
}

// Check names what is missing: node on PATH, or the installed suite.
func TestCheckSaysWhatIsMissing(t *testing.T) {
	s := fakeSuite(t, "complete")
	if err := s.Check(); err != nil {
		t.Fatalf("an installed suite: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "node is not on PATH") {
		t.Errorf("without node: %v", err)
	}
	if _, err := s.Run(context.Background(), "http://127.0.0.1:1/mcp"); err == nil || !strings.Contains(err.Error(), "node is not on PATH") {
		t.Errorf("Run without node: %v", err)
	}
	s = fakeSuite(t, "complete")
	s.Dir = t.TempDir()
	if err := s.Check(); err == nil || !strings.Contains(err.Error(), "not installed") || !strings.Contains(err.Error(), s.Bin()) {
		t.Errorf("without the suite: %v", err)
	}
}

// A complete run: the suite is run as `conformance server --url URL -o
// DIR` in its directory, colours off; every scenario's verdict is read,
// the failed check's reason from its checks.json, the output kept. A
// failed check makes the suite exit non-zero, which is a verdict, not an
// error. No timeout set means RunTimeout.
func TestRunReadsACompleteRun(t *testing.T) {
	s := fakeSuite(t, "complete")
	url := "http://127.0.0.1:1/mcp"
	r, err := s.Run(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if r.URL != url || r.Passed != 2 || r.Failed != 2 || len(r.Scenarios) != 3 {
		t.Errorf("result: %s, %d passed, %d failed, %d scenarios", r.URL, r.Passed, r.Failed, len(r.Scenarios))
	}
	if p, _ := r.Scenario("ping"); p.Status != Fail || p.Reason() != "Ping: no pong" {
		t.Errorf("ping: %+v, want failed with its check's message", p)
	}
	for _, w := range []string{"args: server --url " + url + " -o ", "cwd: " + s.Dir + "\n", "NO_COLOR=1\n", "Total: 2 passed, 2 failed"} {
		if !strings.Contains(r.Output, w) {
			t.Errorf("output lacks %q:\n%s", w, r.Output)
		}
	}
}

// cutAfter is the timeout of the runs these tests cut off: long enough
// for the runner, a copy of this test binary (a large one under -race),
// to start and print its first lines on a loaded machine.
const cutAfter = 1500 * time.Millisecond

// A run cut off by its timeout returns within it what the suite reported:
// a scenario whose checks.json was written has its verdict, the others are
// NotRun, and say that the suite was cut off.
func TestRunReturnsWhatACutOffRunReported(t *testing.T) {
	s := fakeSuite(t, "cut")
	s.Timeout = cutAfter
	t0 := time.Now()
	r, err := s.Run(context.Background(), "http://127.0.0.1:1/mcp")
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	// Tolerance: 3s over the timeout for a loaded machine to start and
	// kill the runner.
	if took > s.Timeout+3*time.Second {
		t.Errorf("the run took %v, past its timeout of %v", took, s.Timeout)
	}
	if init, _ := r.Scenario("server-initialize"); init.Status != Pass || len(init.Reasons) != 0 {
		t.Errorf("a scenario the suite finished before the cut: %+v, want pass", init)
	}
	for _, name := range []string{"ping", "dns-rebinding-protection"} {
		if sc, _ := r.Scenario(name); sc.Status != NotRun || sc.Reason() != "the suite was cut off after "+cutAfter.String() {
			t.Errorf("%s: %+v, want not run, cut off", name, sc)
		}
	}
}

// A run cut off while a child of the suite still holds its output open
// stops waiting for that output a bounded while after the kill
// (cmd.WaitDelay, 5s) rather than until the child ends.
func TestRunStopsWaitingForTheOutputOfAKilledSuite(t *testing.T) {
	s := fakeSuite(t, "cut-orphan")
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(fakePID, pidFile)
	t.Cleanup(func() { // the orphan is this test's to end
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(string(b)); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	s.Timeout = cutAfter
	t0 := time.Now()
	r, err := s.Run(context.Background(), "http://127.0.0.1:1/mcp")
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	// The timeout, the 5s wait for the output, and 3s of tolerance.
	if took > s.Timeout+8*time.Second {
		t.Errorf("the run took %v: it waited for the output of the suite's child", took)
	}
	if p, _ := r.Scenario("ping"); p.Status != NotRun || p.Reason() != "the suite was cut off after "+cutAfter.String() {
		t.Errorf("ping: %+v", p)
	}
}

// A run that ended before its summary says so, with how it ended; a run
// whose caller gave up is not said to be cut off by its own timeout, and
// returns the caller's error.
func TestRunSaysWhyARunEndedEarly(t *testing.T) {
	s := fakeSuite(t, "crash")
	r, err := s.Run(context.Background(), "http://127.0.0.1:1/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := r.Scenario("ping"); p.Status != NotRun || p.Reason() != "the suite ended before its summary (exit status 3)" {
		t.Errorf("ping of a crashed run: %+v", p)
	}
	s = fakeSuite(t, "cut")
	ctx, cancel := context.WithTimeout(context.Background(), cutAfter)
	defer cancel()
	r, err = s.Run(ctx, "http://127.0.0.1:1/mcp")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a run its caller gave up on: %v, want the caller's deadline", err)
	}
	if p, _ := r.Scenario("ping"); p.Status != NotRun || !strings.HasPrefix(p.Reason(), "the suite ended before its summary (") {
		t.Errorf("ping of a run its caller gave up on: %+v", p)
	}
}

// Output that is not the suite's, or results that cannot be read, are
// errors that say so (and how the suite exited, when it failed).
func TestRunFailsOnWhatItCannotRead(t *testing.T) {
	url := "http://127.0.0.1:1/mcp"
	if _, err := fakeSuite(t, "garbage").Run(context.Background(), url); err == nil || !strings.Contains(err.Error(), "exit status 1; conformance output has no scenarios") {
		t.Errorf("garbage from a failed suite: %v", err)
	}
	_, err := fakeSuite(t, "garbage-ok").Run(context.Background(), url)
	if err == nil || !strings.Contains(err.Error(), "against "+url+": conformance output has no scenarios") || strings.Contains(err.Error(), "exit status") {
		t.Errorf("garbage from a suite that exited 0: %v", err)
	}
	r, err := fakeSuite(t, "bad-checks").Run(context.Background(), url)
	if err == nil || !strings.Contains(err.Error(), "checks.json") || len(r.Scenarios) != 3 {
		t.Errorf("an unreadable checks.json: %v (%d scenarios), want the error with the run's verdicts", err, len(r.Scenarios))
	}
	s := fakeSuite(t, "complete")
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	if _, err := s.Run(context.Background(), url); err == nil {
		t.Error("a run without a directory for its results did not fail")
	}
}

// countStarts makes each start of a fake fixture or mcplocal counted, the
// first taken ones failing as a port another process took.
func countStarts(t *testing.T, role string, taken int) func() []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "starts")
	t.Setenv(fakeRole, role)
	t.Setenv(fakeStarts, f)
	t.Setenv(fakeTaken, strconv.Itoa(taken))
	return func() []string {
		b, _ := os.ReadFile(f)
		return strings.Fields(strings.ReplaceAll(string(b), "\n", " |"))
	}
}

func self(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// The fixture is started on a free loopback port, stateful, and tried on
// a fresh port when another process took the free one first; the URL is
// its MCP endpoint; Stop ends it.
func TestStartFixtureTriesAFreshPortWhenOneWasTaken(t *testing.T) {
	starts := countStarts(t, "fixture", 1)
	p, url, err := StartFixture(context.Background(), self(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	args := strings.Join(starts(), " ")
	if strings.Count(args, "|") != 2 || strings.Count(args, "-stateless=false") != 2 {
		t.Errorf("starts %q, want two, stateful", args)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	if url != "http://"+addr+"/mcp" || TCPReady(addr)(context.Background()) != nil {
		t.Errorf("url %s: not an MCP endpoint that serves", url)
	}
	if !p.Alive() || !strings.Contains(p.Output(), "fixture serving on "+addr) {
		t.Errorf("alive %v, output %q", p.Alive(), p.Output())
	}
	p.Stop()
	p.Stop() // twice is fine
	if p.Alive() || TCPReady(addr)(context.Background()) == nil {
		t.Errorf("after Stop: alive %v, or still serving", p.Alive())
	}
}

// Starting gives up after its tries when the port is always taken, and at
// once on any other failure, quoting the process's output.
func TestStartFixtureGivesUp(t *testing.T) {
	starts := countStarts(t, "fixture", 100)
	if _, _, err := StartFixture(context.Background(), self(t)); err == nil || !strings.Contains(err.Error(), "address already in use") || len(strings.Split(strings.Join(starts(), " "), "|"))-1 != portTries {
		t.Errorf("always taken: %v after starts %q, want %d tries", err, starts(), portTries)
	}
	starts = countStarts(t, "fixture", 0)
	t.Setenv(fakeFail, "fixture: boom")
	_, _, err := StartFixture(context.Background(), self(t))
	if err == nil || !strings.Contains(err.Error(), "everything-server exited before it was ready (exit status 2):\nfixture: boom") {
		t.Errorf("a fixture that fails: %v", err)
	}
	if n := strings.Count(strings.Join(starts(), " "), "|"); n != 1 {
		t.Errorf("a fixture that fails was started %d times, want once", n)
	}
}

// mcplocal fronts the fixture in project everything with its names
// unprefixed; a build that rejects the prefix key runs prefixed, and says
// so; a port taken first is retried on a fresh one.
func TestStartMcplocalRunsUnprefixedWhenItCan(t *testing.T) {
	dir := t.TempDir()
	starts := countStarts(t, "mcplocal", 1)
	m, err := StartMcplocal(context.Background(), self(t), "http://127.0.0.1:9/mcp", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	if m.Prefixed || !strings.HasSuffix(m.URL, "/projects/everything/mcp") || !strings.HasPrefix(m.URL, "http://127.0.0.1:") {
		t.Errorf("prefixed %v, url %s", m.Prefixed, m.URL)
	}
	if n := strings.Count(strings.Join(starts(), " "), "|"); n != 2 {
		t.Errorf("%d starts, want a second one after the taken port", n)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, configName))
	if err != nil || !strings.Contains(string(cfg), "prefix: false") || !strings.Contains(string(cfg), "url: http://127.0.0.1:9/mcp") {
		t.Errorf("config %q (%v)", cfg, err)
	}
	t.Setenv(fakeNoPrefix, "1")
	p, err := StartMcplocal(context.Background(), self(t), "http://127.0.0.1:9/mcp", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if !p.Prefixed {
		t.Error("a build that rejects prefix: not said to run prefixed")
	}
	if cfg, _ := os.ReadFile(filepath.Join(dir, configName)); strings.Contains(string(cfg), "prefix") {
		t.Errorf("the prefixed run's config sets prefix:\n%s", cfg)
	}
}

// An mcplocal that fails for another reason is not retried.
func TestStartMcplocalGivesUpOnAnotherFailure(t *testing.T) {
	starts := countStarts(t, "mcplocal", 0)
	t.Setenv(fakeFail, "mcplocal: no audit store")
	_, err := StartMcplocal(context.Background(), self(t), "http://127.0.0.1:9/mcp", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "mcplocal: no audit store") {
		t.Errorf("a failing mcplocal: %v", err)
	}
	if n := strings.Count(strings.Join(starts(), " "), "|"); n != 1 {
		t.Errorf("a failing mcplocal was started %d times, want once", n)
	}
}

// A start its caller gives up on stops the process it started.
func TestStartStopsTheProcessWhenItsCallerGivesUp(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Setenv(fakeRole, "idle")
	t.Setenv(fakePID, pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), cutAfter)
	defer cancel()
	notYet := func(context.Context) error { return errors.New("not yet") }
	if _, err := Start(ctx, "idle", self(t), nil, notYet); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Start: %v, want the caller's deadline", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the idle process did not start: %v", err)
	}
	pid, _ := strconv.Atoi(string(b))
	if err := syscall.Kill(pid, 0); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("process %d still runs after its start was given up", pid)
	}
	if _, err := Start(context.Background(), "missing", filepath.Join(t.TempDir(), "no-such-binary"), nil, notYet); err == nil || !strings.HasPrefix(err.Error(), "missing: ") {
		t.Errorf("a binary that does not exist: %v", err)
	}
}

// The readiness probes: a port that accepts, a URL that answers 200.
func TestReadinessProbes(t *testing.T) {
	ctx := context.Background()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ok.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer sick.Close()
	if err := HTTPReady(ok.URL + "/healthz")(ctx); err != nil {
		t.Errorf("a 200: %v", err)
	}
	if err := HTTPReady(sick.URL + "/healthz")(ctx); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("a 503: %v", err)
	}
	free, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if err := HTTPReady("http://" + free + "/healthz")(ctx); err == nil {
		t.Error("nothing listening: ready")
	}
	if err := HTTPReady("http://\x7f/")(ctx); err == nil {
		t.Error("a URL that cannot be requested: ready")
	}
	if err := TCPReady(strings.TrimPrefix(ok.URL, "http://"))(ctx); err != nil {
		t.Errorf("a listening port: %v", err)
	}
	if err := TCPReady(free)(ctx); err == nil {
		t.Error("a free port: ready")
	}
}

// A process's output is kept to its last logBytes.
func TestOutputKeepsTheLastBytes(t *testing.T) {
	c := &capped{max: 10}
	w := bufio.NewWriter(c)
	fmt.Fprint(w, "0123456789abcdef")
	_ = w.Flush()
	if got := c.String(); got != "6789abcdef" {
		t.Errorf("kept %q, want the last 10 bytes", got)
	}
	c = &capped{max: 10}
	_, _ = c.Write([]byte("0123456789"))
	if got := c.String(); got != "0123456789" {
		t.Errorf("exactly max bytes: kept %q", got)
	}
}

// Build compiles a package of the module at root into dir, the binary
// named after the package; a package that does not build is an error
// quoting the compiler.
func TestBuildCompilesAPackageOfTheModule(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{
		"go.mod":         "module example.com/tiny\n\ngo 1.21\n",
		"hello/main.go":  "package main\n\nfunc main() {}\n",
		"broken/main.go": "package main\n\nfunc main() { undefined() }\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOTOOLCHAIN", "local") // never fetch a toolchain
	bin, err := Build(context.Background(), root, "./hello", out)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(bin); err != nil || bin != filepath.Join(out, "hello") || fi.Mode()&0o111 == 0 {
		t.Errorf("built %s (%v), want an executable %s", bin, err, filepath.Join(out, "hello"))
	}
	if _, err := Build(context.Background(), root, "./broken", out); err == nil || !strings.Contains(err.Error(), "go build ./broken") || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("a package that does not build: %v", err)
	}
}
