package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/internal/syncbuf"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// mcplocalBinary builds cmd/mcplocal once per test run.
func mcplocalBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "mcpchaos-mcplocal-"); buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		buildPath, buildErr = BuildMcplocal(ctx, buildDir)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

func newDocmost(t *testing.T) *upstream.Server {
	t.Helper()
	s, err := upstream.NewDocmost(upstream.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func binarySpec(t *testing.T, up *upstream.Server) Spec {
	t.Helper()
	w := &World{
		Store:    "sqlite:" + filepath.Join(t.TempDir(), "audit.db"),
		Projects: map[string]*WorldProject{Project: {Servers: map[string]*WorldServer{"docmost": {URL: up.URL()}}}},
	}
	if err := mcplocal.Config(w).Validate(); err != nil {
		t.Fatal(err)
	}
	return Spec{World: w, Bounds: CompressedBounds(), Failpoints: NewFailpoints()}
}

func newBinary(t *testing.T) *Binary {
	t.Helper()
	b := &Binary{Path: mcplocalBinary(t)}
	t.Cleanup(func() {
		if err := b.Stop(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		if t.Failed() {
			t.Logf("mcplocal logs:\n%s", b.Logs())
		}
	})
	return b
}

// testCtx bounds one test's work; take it after newBinary, whose build of
// mcplocal (minutes on a loaded machine) is not the test's to spend.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// listTools lists the project's tools through the official SDK client.
func listTools(ctx context.Context, t *testing.T, base string) []string {
	t.Helper()
	cs, err := SDKClient(ctx, base+"/projects/"+Project+"/mcp", "")
	if err != nil {
		t.Fatalf("connect %s: %v", base, err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list via %s: %v", base, err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "docmost_search") {
		t.Fatalf("tools/list via %s = %v, want docmost_search among them", base, names)
	}
	return names
}

func callTool(ctx context.Context, t *testing.T, base, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	cs, err := SDKClient(ctx, base+"/projects/"+Project+"/mcp", "")
	if err != nil {
		t.Fatalf("connect %s: %v", base, err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	return res
}

// requireGone fails unless pid names no process (it was reaped).
func requireGone(t *testing.T, pid int) {
	t.Helper()
	if pid <= 0 {
		t.Fatalf("pid %d", pid)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d still exists (kill -0: %v)", pid, err)
	}
}

// requireNoTargetGoroutines fails if a goroutine of the binary target (its
// process waiters, health probes) is still running.
func requireNoTargetGoroutines(t *testing.T) {
	t.Helper()
	var left string
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		left = ""
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "harness.(*Binary)") || strings.Contains(g, "harness.pollReady") || strings.Contains(g, "harness.spawn") || strings.Contains(g, "harness.(*process)") || strings.Contains(g, "os/exec.(*Cmd)") {
				left += g + "\n\n"
			}
		}
		if left == "" {
			return
		}
	}
	t.Fatalf("goroutines of the binary target left behind:\n%s", left)
}

func waitForLog(t *testing.T, b *Binary, substr string) {
	t.Helper()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(b.Logs(), substr) {
			return
		}
	}
	t.Fatalf("captured stderr has no %q:\n%s", substr, b.Logs())
}

type syncBuffer = syncbuf.Buffer

func TestBinaryStartRestartKillRestartStop(t *testing.T) {
	b := newBinary(t) // built before the test's own time starts
	ctx := testCtx(t)
	up := newDocmost(t)
	tee := &syncBuffer{}
	b.Stderr = tee
	if got, want := b.Name(), "binary:"+b.Path; got != want {
		t.Fatalf("Name() = %q, want %q", got, want)
	}

	if err := b.Start(ctx, binarySpec(t, up)); err != nil {
		t.Fatal(err)
	}
	url, pid1 := b.URL(), b.PID()
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL() = %q, want a loopback URL", url)
	}
	listTools(ctx, t, url)
	waitForLog(t, b, "trace=")
	if !strings.Contains(tee.String(), "trace=") {
		t.Fatalf("Stderr got no request line:\n%s", tee.String())
	}
	if err := b.Start(ctx, binarySpec(t, up)); err == nil {
		t.Fatal("a second Start succeeded")
	}

	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	pid2 := b.PID()
	if b.URL() != url || pid2 == pid1 {
		t.Fatalf("after Restart: URL %s pid %d, want URL %s and a pid other than %d", b.URL(), pid2, url, pid1)
	}
	requireGone(t, pid1)
	listTools(ctx, t, url)

	if err := b.KillRestart(ctx); err != nil {
		t.Fatal(err)
	}
	pid3 := b.PID()
	if b.URL() != url || pid3 == pid2 {
		t.Fatalf("after KillRestart: URL %s pid %d, want URL %s and a pid other than %d", b.URL(), pid3, url, pid2)
	}
	requireGone(t, pid2)
	listTools(ctx, t, url)

	dir := b.dir
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid3)
	if err := b.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if b.PID() != 0 {
		t.Fatalf("PID() = %d after Stop", b.PID())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("config dir %s left after Stop (%v)", dir, err)
	}
	if got := strings.Count(b.Logs(), "--- mcpchaos: starting"); got != 3 {
		t.Fatalf("Logs() records %d starts, want 3:\n%s", got, b.Logs())
	}
	requireNoTargetGoroutines(t)
}

func TestBinaryRestartWaitsForTheAddressToFree(t *testing.T) {
	b := newBinary(t) // built before the test's own time starts
	ctx := testCtx(t)
	if err := b.Start(ctx, binarySpec(t, newDocmost(t))); err != nil {
		t.Fatal(err)
	}
	url, pid := b.URL(), b.PID()
	if err := b.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	requireGone(t, pid)
	squatter, err := net.Listen("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatalf("take the freed address: %v", err)
	}
	// The squatter holds the address until the restart's first attempt has
	// met it (its log says so), however long the process takes to start,
	// then frees it for the attempt after.
	met := make(chan struct{})
	go func() {
		defer close(met)
		defer squatter.Close()
		for ctx.Err() == nil && !strings.Contains(b.Logs(), "address already in use") {
			time.Sleep(5 * time.Millisecond)
		}
	}()
	defer func() { _ = squatter.Close(); <-met }()
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if b.URL() != url {
		t.Fatalf("URL() = %s after Restart, want %s", b.URL(), url)
	}
	if !strings.Contains(b.Logs(), "address already in use") {
		t.Fatalf("the first restart attempt should have met the squatter:\n%s", b.Logs())
	}
	listTools(ctx, t, url)
}

func TestBinaryDeliversFailpointsAtEachStart(t *testing.T) {
	b := newBinary(t) // built before the test's own time starts
	ctx := testCtx(t)
	spec := binarySpec(t, newDocmost(t))
	spec.Failpoints.PanicToolCall("docmost_update_page")
	if err := b.Start(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if res := callTool(ctx, t, b.URL(), "docmost_update_page", map[string]any{"page_id": "x"}); !res.IsError {
		t.Fatal("the failpoint armed before Start did not fire")
	}
	spec.Failpoints.PanicToolCall("docmost_search")
	if res := callTool(ctx, t, b.URL(), "docmost_search", map[string]any{"query": "q"}); res.IsError {
		t.Fatal("a failpoint armed after Start reached the running process")
	}
	if err := b.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if res := callTool(ctx, t, b.URL(), "docmost_search", map[string]any{"query": "q"}); !res.IsError {
		t.Fatal("the failpoint armed after Start was not delivered at Restart")
	}
}

func TestBinaryStartFailsWithTheProcessOutput(t *testing.T) {
	b := newBinary(t) // built before the test's own time starts
	ctx := testCtx(t)
	spec := binarySpec(t, newDocmost(t))
	spec.Bounds = spec.Bounds.With("MCPCTL_LLM_PROVIDER_TIMEOUT_MS", 2*spec.Bounds.N("MCPCTL_LLM_CALL_BUDGET_MS")) // mcplocal refuses these knobs
	err := b.Start(ctx, spec)
	if err == nil {
		t.Fatal("Start succeeded with contradicting knobs")
	}
	if !strings.Contains(err.Error(), "MCPCTL_LLM_PROVIDER_TIMEOUT_MS") || !strings.Contains(err.Error(), "exited before /healthz answered") {
		t.Fatalf("Start error does not carry the process's stderr: %v", err)
	}
	if b.PID() != 0 || b.dir != "" {
		t.Fatalf("a failed Start left pid %d, dir %q", b.PID(), b.dir)
	}
	if err := b.Restart(ctx); err == nil {
		t.Fatal("Restart after a failed Start succeeded")
	}
	requireNoTargetGoroutines(t)
}

func TestBinaryMisuse(t *testing.T) {
	ctx := testCtx(t)
	b := &Binary{Path: filepath.Join(t.TempDir(), "no-such-mcplocal")}
	if err := b.Restart(ctx); err == nil {
		t.Error("Restart before Start succeeded")
	}
	if err := b.KillRestart(ctx); err == nil {
		t.Error("KillRestart before Start succeeded")
	}
	if err := b.Stop(ctx); err != nil {
		t.Errorf("Stop before Start: %v", err)
	}
	if err := b.Start(ctx, Spec{}); err == nil {
		t.Error("Start without a config succeeded")
	}
	w := &World{Store: "memory", Projects: map[string]*WorldProject{
		Project: {Servers: map[string]*WorldServer{"docmost": {URL: "http://127.0.0.1:1/mcp"}}},
	}}
	if err := b.Start(ctx, Spec{World: w}); err == nil {
		t.Error("Start of a missing executable succeeded")
	}
	if b.dir != "" {
		t.Errorf("failed Start left %s", b.dir)
	}
}

func TestBinaryEnvironment(t *testing.T) {
	t.Setenv("MCPCTL_GATE_LLM_TIMEOUT_MS", "99999")
	t.Setenv("MCPLOCAL_FAILPOINTS", "tools/call=stray:hang")
	t.Setenv("MCPCHAOS_UNRELATED", "kept")

	bounds := CompressedBounds().With("MCPCTL_AUDIT_WRITE_TIMEOUT_MS", 2)
	fps := NewFailpoints()
	fps.HangToolCall("docmost_search")
	b := &Binary{Env: []string{"ALICE_TOKEN=t"}, spec: Spec{Bounds: bounds, Failpoints: fps}}
	env := b.environLocked()

	count := func(key string) (n int, val string) {
		for _, e := range env {
			if k, v, _ := strings.Cut(e, "="); k == key {
				n, val = n+1, v
			}
		}
		return n, val
	}
	offs := 0
	for _, name := range bounds.Names() {
		want := fmt.Sprint(bounds.N(name))
		if bounds.N(name) == 0 {
			// A wait that is off is left to the proxy's default, which is
			// off; and the test process's own value is not passed on.
			offs++
			if n, _ := count(name); n != 0 {
				t.Errorf("%s is 0 (off) in the spec, yet passed on %d times", name, n)
			}
			continue
		}
		if n, v := count(name); n != 1 || v != want {
			t.Errorf("%s: %d entries, value %q; want one, %q", name, n, v, want)
		}
	}
	if offs == 0 || len(bounds.Names()) < 20 {
		t.Errorf("%d bounds, %d of them off: the check sees neither kind", len(bounds.Names()), offs)
	}
	if _, v := count("MCPCTL_AUDIT_WRITE_TIMEOUT_MS"); v != "2" {
		t.Errorf("the audit write bound is passed as %s ms, want the spec's 2", v)
	}
	if n, v := count("MCPCHAOS_UNRELATED"); n != 1 || v != "kept" {
		t.Errorf("the test process's environment is not passed on")
	}
	if n, _ := count("ALICE_TOKEN"); n != 1 {
		t.Errorf("Binary.Env is not passed on")
	}
	if n, v := count(failpointsEnv); n != 1 || v != "tools/call=docmost_search:hang" {
		t.Errorf("%s: %d entries, value %q; want one, the spec's set", failpointsEnv, n, v)
	}
	if n, v := count("MCPLOCAL_ENABLE_FAILPOINTS"); n != 1 || v != "1" {
		t.Errorf("MCPLOCAL_ENABLE_FAILPOINTS: %d entries, value %q; want one, 1 (a test run)", n, v)
	}
	b.NoFailpointSwitch = true
	env = b.environLocked()
	if n, _ := count("MCPLOCAL_ENABLE_FAILPOINTS"); n != 0 {
		t.Errorf("NoFailpointSwitch: the switch is still in the environment")
	}
	if n, _ := count(failpointsEnv); n != 1 {
		t.Errorf("NoFailpointSwitch: %s is gone too; want it kept, as an attacker would set it", failpointsEnv)
	}
	b.NoFailpointSwitch = false

	b.spec = Spec{}
	env = b.environLocked()
	for _, e := range env {
		if strings.HasPrefix(e, "MCPCTL_") || strings.HasPrefix(e, failpointsEnv+"=") {
			t.Errorf("a spec without knobs or failpoints passes %s (the proxy's defaults must apply)", e)
		}
	}
}

func TestTailBufferKeepsTheTail(t *testing.T) {
	tb := newTailBuffer(64)
	for i := range 100 {
		fmt.Fprintf(tb, "line %03d\n", i)
	}
	s := tb.String()
	if !strings.HasPrefix(s, "[... ") || !strings.HasSuffix(s, "line 099\n") {
		t.Fatalf("String() = %q", s)
	}
	body := s[strings.IndexByte(s, '\n')+1:]
	if len(body) > 64 || !strings.HasPrefix(body, "line ") {
		t.Fatalf("kept %d bytes, not starting at a line: %q", len(body), body)
	}
	if len(tb.buf) > 2*64 {
		t.Fatalf("buffer holds %d bytes, bound is %d", len(tb.buf), 2*64)
	}
	small := newTailBuffer(64)
	fmt.Fprint(small, "short\n")
	if small.String() != "short\n" {
		t.Fatalf("String() = %q", small.String())
	}
}
