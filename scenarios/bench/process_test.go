package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/scenarios/load"
)

// output collects a process's output; it is read once the process is gone.
type output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// cancelOn is an output that calls cancel once what it holds contains
// the needle.
type cancelOn struct {
	*output
	needle string
	cancel context.CancelFunc
}

func (c cancelOn) Write(p []byte) (int, error) {
	n, err := c.output.Write(p)
	if strings.Contains(c.output.String(), c.needle) {
		c.cancel()
	}
	return n, err
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// standIn is the test binary, which runs as the floor or as mcplocal when
// given their command lines (TestMain).
func standIn(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func docmost(t *testing.T) *upstream.Server {
	t.Helper()
	fake, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	return fake
}

// callThrough opens a session on endpoint and calls the fake docmost's
// update_page once.
func callThrough(t *testing.T, endpoint string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hc := load.NewHTTPClient(1)
	defer hc.CloseIdleConnections()
	s := &load.Session{HTTP: hc, URL: endpoint}
	if err := s.Initialize(ctx); err != nil {
		t.Fatalf("initialize through %s: %v", endpoint, err)
	}
	defer s.Close(ctx)
	r, err := s.CallTool(ctx, "update_page", map[string]any{"page_id": "p"})
	if err != nil || r.IsError {
		t.Fatalf("update_page through %s: %v %+v", endpoint, err, r)
	}
}

// stopWithin runs stop and fails the test when it has not returned within
// budget.
func stopWithin(t *testing.T, budget time.Duration, what string, stop func()) time.Duration {
	t.Helper()
	done := make(chan struct{})
	t0 := time.Now()
	go func() { stop(); close(done) }()
	select {
	case <-done:
		return time.Since(t0)
	case <-time.After(budget):
		t.Fatalf("%s: Stop has not returned within %v", what, budget)
		return 0
	}
}

// alive says whether process pid exists (it has not been reaped).
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// childPID is the pid the stand-in printed first in out.
func childPID(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`stand-in \w+ pid (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the stand-in's output says no pid: %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// A started floor is its own process in front of the upstream, at the
// upstream's path on a loopback port of its own; its output reaches the
// writer given; Stop ends it by the interrupt (a clean exit, not the kill
// kept for a process that ignores it), at once for an idle floor, and may
// be called again.
func TestStartFloorPutsAProcessOfItsOwnInFrontOfTheUpstream(t *testing.T) {
	fake := docmost(t)
	var out output
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	f, err := StartFloor(ctx, standIn(t), fake.URL(), &out)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			f.Stop()
		}
	}()
	fu, _ := url.Parse(f.URL)
	uu, _ := url.Parse(fake.URL())
	if fu.Scheme != "http" || fu.Hostname() != "127.0.0.1" || fu.Host == uu.Host || fu.Path != uu.Path {
		t.Errorf("floor URL %s, want http on a loopback port of its own with the upstream's path (upstream %s)", f.URL, fake.URL())
	}
	callThrough(t, f.URL)
	if f.PID() == os.Getpid() || !alive(f.PID()) || RSS(f.PID()) <= 0 {
		t.Errorf("floor pid %d (this process %d): not a live process of its own with an RSS (%d)", f.PID(), os.Getpid(), RSS(f.PID()))
	}
	// An idle floor shuts down at once; one that still held a connection
	// would wait out its 2 s grace first. Budget: 1.8 s, room for a clean
	// exit on a busy machine and for the race detector's 1 s pause at exit.
	if took := stopWithin(t, 15*time.Second, "floor", f.Stop); took > 1800*time.Millisecond {
		t.Errorf("Stop of an idle floor took %v, want under 1.8 s", took)
	}
	stopped = true
	if st := f.cmd.ProcessState; st == nil || !st.Success() {
		t.Errorf("the floor did not end cleanly on the interrupt: %v", st)
	}
	if alive(f.PID()) {
		t.Errorf("floor pid %d still there after Stop", f.PID())
	}
	stopWithin(t, time.Second, "floor, stopped again", f.Stop)
	if !strings.Contains(out.String(), "fake floor serving at http://"+fu.Host) {
		t.Errorf("the floor's output did not reach the writer given: %q", out.String())
	}
}

func TestStartFloorFailsWithoutLeavingAProcess(t *testing.T) {
	exe := standIn(t)
	ctx := context.Background()
	t.Run("an upstream that is no URL", func(t *testing.T) {
		if f, err := StartFloor(ctx, exe, "http://bad host/%zz", nil); err == nil {
			f.Stop()
			t.Fatal("an upstream that is no URL was accepted")
		}
	})
	t.Run("no such program", func(t *testing.T) {
		if f, err := StartFloor(ctx, filepath.Join(t.TempDir(), "no-such-mcpchaos"), "http://127.0.0.1:1/mcp", nil); err == nil {
			f.Stop()
			t.Fatal("a program that does not exist was started")
		}
	})
	t.Run("the floor exits before it listens", func(t *testing.T) {
		// fake floor refuses an upstream that is not http(s).
		f, err := StartFloor(ctx, exe, "ftp://127.0.0.1/mcp", nil)
		if err == nil {
			f.Stop()
			t.Fatal("a floor that exited was reported started")
		}
		if !strings.Contains(err.Error(), "exited before listening") {
			t.Errorf("error %q does not say the floor exited", err)
		}
	})
	t.Run("the floor never listens", func(t *testing.T) {
		t.Setenv(floorSilentEnv, "1")
		// The wait ends once the stand-in says it stays silent, however
		// slowly a busy machine starts it.
		out := &output{}
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		f, err := StartFloor(sctx, exe, "http://127.0.0.1:1/mcp", cancelOn{out, "staying silent", cancel})
		if err == nil {
			f.Stop()
			t.Fatal("a floor that never listened was reported started")
		}
		if !strings.Contains(err.Error(), "not listening") {
			t.Errorf("error %q does not say the floor is not listening", err)
		}
		pid := childPID(t, out.String())
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("the floor that never listened (pid %d) was left running", pid)
		}
	})
}

// standInConfig is what the started mcplocal was given.
func standInConfig(t *testing.T, m *Mcplocal) seenConfig {
	t.Helper()
	base, _, _ := strings.Cut(m.URL, "/projects/")
	resp, err := http.Get(base + "/stand-in/config")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var c seenConfig
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// bareTemp points the temporary directory at an empty one of the test's, so
// that what a start leaves behind shows.
func bareTemp(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	return tmp
}

func leftIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A started mcplocal serves the project "bench" whose one server, named
// Server, is the upstream; with its SQLite audit in its own directory, the
// config's relay as asked (left out by default), the environment added,
// its profiles on a port of its own; its log reaches the writer given.
// Stop ends it by the interrupt and removes its files, and may be called
// again.
func TestStartMcplocalServesTheUpstreamAsTheProjectBench(t *testing.T) {
	tmp := bareTemp(t)
	fake := docmost(t)
	off := false
	for _, c := range []struct {
		name  string
		relay *bool
	}{{"relay left to its default", nil}, {"relay off", &off}} {
		t.Run(c.name, func(t *testing.T) {
			var out output
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			m, err := StartMcplocalOpts(ctx, standIn(t), fake.URL(), McplocalOptions{Stderr: &out, Relay: c.relay, Env: []string{"MCPCTL_SESSIONS_MAX=20000"}})
			if err != nil {
				t.Fatal(err)
			}
			stopped := false
			defer func() {
				if !stopped {
					m.Stop()
				}
			}()
			if !strings.HasSuffix(m.URL, "/projects/bench/mcp") {
				t.Errorf("URL %s is not the project bench's endpoint", m.URL)
			}
			callThrough(t, m.URL)
			seen := standInConfig(t, m)
			if len(seen.Projects) != 1 || len(seen.Projects["bench"]) != 1 || seen.Projects["bench"][Server] != fake.URL() {
				t.Errorf("projects %v, want only bench, its one server %q at %s", seen.Projects, Server, fake.URL())
			}
			if (c.relay == nil) != (seen.Relay == nil) || c.relay != nil && *seen.Relay != *c.relay {
				t.Errorf("relay %v, want %v", seen.Relay, c.relay)
			}
			dbPath, ok := strings.CutPrefix(seen.Audit, "sqlite:")
			if !ok || !strings.HasPrefix(dbPath, tmp+string(filepath.Separator)) {
				t.Errorf("audit %q, want SQLite in a directory of its own under %s", seen.Audit, tmp)
			}
			if strings.Join(seen.Env, " ") != "MCPCTL_SESSIONS_MAX=20000" {
				t.Errorf("the process's MCPCTL_ environment: %v, want the one added", seen.Env)
			}
			p := Snapshot(ctx, http.DefaultClient, Target{PID: m.PID(), Pprof: m.Pprof})
			if p.RSSBytes <= 0 || p.Goroutines <= 0 || p.HeapBytes <= 0 || m.PID() == os.Getpid() {
				t.Errorf("snapshot of pid %d through %s: %+v, want its RSS, goroutines and live heap", m.PID(), m.Pprof, p)
			}
			if len(leftIn(t, tmp)) != 1 {
				t.Errorf("the temporary directory holds %v, want the one directory of this mcplocal", leftIn(t, tmp))
			}
			stopWithin(t, 15*time.Second, "mcplocal", m.Stop)
			stopped = true
			if st := m.cmd.ProcessState; st == nil || !st.Success() {
				t.Errorf("mcplocal did not end cleanly on the interrupt: %v", st)
			}
			if left := leftIn(t, tmp); len(left) != 0 {
				t.Errorf("Stop left %v behind", left)
			}
			stopWithin(t, time.Second, "mcplocal, stopped again", m.Stop)
			if !strings.Contains(out.String(), "stand-in mcplocal serving at") {
				t.Errorf("the process's log did not reach the writer given: %q", out.String())
			}
		})
	}
}

// StartMcplocal and StartMcplocalWith are StartMcplocalOpts with the
// default relay and with the relay given.
func TestStartMcplocalShorthandsSetTheRelayAsTheySay(t *testing.T) {
	bareTemp(t)
	fake := docmost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	m, err := StartMcplocal(ctx, standIn(t), fake.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := standInConfig(t, m)
	m.Stop()
	if seen.Relay != nil {
		t.Errorf("StartMcplocal: relay %v, want it left out", *seen.Relay)
	}
	on := true
	if m, err = StartMcplocalWith(ctx, standIn(t), fake.URL(), nil, &on); err != nil {
		t.Fatal(err)
	}
	seen = standInConfig(t, m)
	m.Stop()
	if seen.Relay == nil || !*seen.Relay {
		t.Errorf("StartMcplocalWith(relay true): relay %v", seen.Relay)
	}
}

func TestStartMcplocalFailsWithoutLeavingAProcessOrFiles(t *testing.T) {
	exe := standIn(t)
	ctx := context.Background()
	for _, c := range []struct {
		name, path, upstream, health string
		// notReady: the wait ends once the stand-in has answered
		// /healthz with a refusal, so a slow start on a busy machine
		// never cuts it short before the process has said its pid.
		notReady bool
		says     string
	}{
		{name: "an upstream the config refuses", path: exe, upstream: "ftp://127.0.0.1/mcp"},
		{name: "no such program", path: "", upstream: "http://127.0.0.1:1/mcp"},
		{name: "it exits before answering", path: exe, upstream: "http://127.0.0.1:1/mcp", health: "exit", says: "exited before answering /healthz"},
		{name: "it never answers 200", path: exe, upstream: "http://127.0.0.1:1/mcp", health: "unready", notReady: true, says: "no /healthz answer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := bareTemp(t)
			t.Setenv(mcplocalHealthEnv, c.health)
			path := c.path
			if path == "" {
				path = filepath.Join(t.TempDir(), "no-such-mcplocal")
			}
			sctx, cancel := context.WithCancel(ctx)
			defer cancel()
			out := &output{}
			var w io.Writer = out
			if c.notReady {
				w = cancelOn{out, "answered /healthz not ready", cancel}
			}
			m, err := StartMcplocalOpts(sctx, path, c.upstream, McplocalOptions{Stderr: w})
			if err == nil {
				m.Stop()
				t.Fatal("reported started")
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Errorf("error %q does not say %q", err, c.says)
			}
			if left := leftIn(t, tmp); len(left) != 0 {
				t.Errorf("a failed start left %v behind", left)
			}
			if c.health != "" {
				if pid := childPID(t, out.String()); alive(pid) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("the process that failed to start (pid %d) was left running", pid)
				}
			}
		})
	}
}
