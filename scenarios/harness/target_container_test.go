package harness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// What a container is given is what a process is given: the spec's bounds,
// failpoints with their switch, and the variables its config names; the
// known mutant switched on follows it in.
func TestAContainerIsGivenWhatAProcessIs(t *testing.T) {
	fps := NewFailpoints()
	fps.HangToolCall("docmost_search")
	b := CompressedBounds().With(BoundSessions, 3)
	env := specEnv(Spec{Bounds: b, Failpoints: fps, Env: map[string]string{"B_KEY": "b", "A_KEY": "a"}})
	want := append(b.Environ(), failpointsEnv+"="+fps.String(), "MCPLOCAL_ENABLE_FAILPOINTS=1", "A_KEY=a", "B_KEY=b")
	if !slices.Equal(env, want) {
		t.Errorf("spec env\n%v\nwant\n%v", env, want)
	}
	if env := specEnv(Spec{}); len(env) != 0 {
		t.Errorf("an empty spec gives %v", env)
	}
	t.Setenv(KnownMutantEnv, "some-mutant")
	got := containerEnv([]string{"A=1", "B=x=y", "A=2"})
	if got["A"] != "2" || got["B"] != "x=y" || got[KnownMutantEnv] != "some-mutant" || len(got) != 3 {
		t.Errorf("container env %v", got)
	}
	os.Unsetenv(KnownMutantEnv)
	if _, ok := containerEnv(nil)[KnownMutantEnv]; ok {
		t.Error("a known mutant not switched on is passed in")
	}
}

// A proxy may take its stop drain and its shutdown grace to stop (the
// grace's default when the bounds have none).
func TestShutdownGraceIsTheDrainAndTheGrace(t *testing.T) {
	b := CompressedBounds().WithD(BoundStopDrain, 300*time.Millisecond).WithD(BoundShutdownGrace, time.Second)
	if got := shutdownGrace(b); got != 1300*time.Millisecond {
		t.Errorf("grace %v, want 1.3s", got)
	}
	b = b.With(BoundShutdownGrace, 0)
	if got, want := shutdownGrace(b), 300*time.Millisecond+DefaultBounds().D(BoundShutdownGrace); got != want {
		t.Errorf("grace %v, want the default grace and the drain, %v", got, want)
	}
	if tail("abc", 3) != "abc" || tail("abcd", 3) != "[...]\nbcd" {
		t.Errorf("tail %q %q", tail("abc", 3), tail("abcd", 3))
	}
}

// A sqlite store is bound into the container at its absolute path; other
// stores are reached as they are.
func TestAuditBindMountsASqliteStoreAtItsPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	store := "sqlite:sub/audit.db"
	binds, err := auditBind(&store)
	abs := filepath.Join(dir, "sub")
	if err != nil || store != "sqlite:"+filepath.Join(abs, "audit.db") || !slices.Equal(binds, []string{abs + ":" + abs}) {
		t.Errorf("store %q binds %v, %v", store, binds, err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Errorf("the store's directory is not made: %v", err)
	}
	for _, s := range []string{"postgres://h/db", "memory", "sqlite:", "sqlite::memory:"} {
		was := s
		if binds, err := auditBind(&s); binds != nil || err != nil || s != was {
			t.Errorf("%q: binds %v, store %q, %v", was, binds, s, err)
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := "sqlite:" + filepath.Join(file, "audit.db")
	if _, err := auditBind(&s); err == nil {
		t.Error("a store under a file bound")
	}
}

// A container target refuses what it cannot do before it reaches Docker.
func TestAContainerRefusesBeforeDocker(t *testing.T) {
	ctx := context.Background()
	c := &Container{Image: "mcpchaos/mcplocal:none"}
	if c.Name() != "container:mcpchaos/mcplocal:none" || c.URL() != "http://" || c.Logs(ctx) != "" {
		t.Errorf("name %q url %q", c.Name(), c.URL())
	}
	if err := c.Start(ctx, Spec{}); err == nil || !strings.Contains(err.Error(), "no world") {
		t.Errorf("start without a world: %v", err)
	}
	if err := c.Restart(ctx); err == nil || !strings.Contains(err.Error(), "restart before start") {
		t.Errorf("restart before start: %v", err)
	}
	if err := c.KillRestart(ctx); err == nil || !strings.Contains(err.Error(), "kill-restart before start") {
		t.Errorf("kill-restart before start: %v", err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Errorf("stop before start: %v", err)
	}
	if err := c.Ready(ctx); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("ready before start: %v", err)
	}
	if err := (&Service{r: &containerRun{}}).Stop(ctx); err != nil {
		t.Errorf("stop of a service never created: %v", err)
	}
	if id := (&containerRun{}).id(); id != "not created" {
		t.Errorf("id %q", id)
	}
}

// A container that cannot be run (no Docker here, or an image never built)
// fails its start saying what to do, and leaves no config behind.
func TestAContainerThatCannotRunSaysWhatToDo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &Container{Image: "mcpchaos/mcplocal:never-built-" + NewImageSet().Tag()}
	err := c.Start(ctx, foreignWorld(t))
	if err == nil {
		_ = c.Stop(ctx)
		t.Fatal("a container of an image never built started")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, c.Name()+": ") ||
		!strings.Contains(msg, dockerScriptPath+" start") && !strings.Contains(msg, "never pulled: build it first") {
		t.Errorf("the error does not say what to do: %v", err)
	}
	if c.dir != "" || c.URL() != "http://" {
		t.Errorf("a failed start left dir %q, URL %q", c.dir, c.URL())
	}
}

// So does a foreign image spec, its output note included.
func TestAForeignImageThatCannotRunSaysWhatToDo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out syncBuffer
	f := mustParseForeign(t, "name: img\nimage: 'mcpchaos/none:never-built-"+NewImageSet().Tag()+"'\nargs: [serve, '{{.Listen}}']").Target(&out).(*Foreign)
	err := f.Start(ctx, foreignWorld(t))
	if err == nil {
		_ = f.Stop(ctx)
		t.Fatal("an image never built started")
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "foreign:img: ") ||
		!strings.Contains(msg, dockerScriptPath+" start") && !strings.Contains(msg, "never pulled: build it first") {
		t.Errorf("the error does not say what to do: %v", err)
	}
	if f.dir != "" || f.run != nil {
		t.Errorf("a failed start left dir %q, run %v", f.dir, f.run)
	}
}

// A service of an image never built does not start, and says what to do.
func TestAServiceThatCannotRunSaysWhatToDo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr, err := FreeLoopbackAddr()
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("a free address %q, %v", addr, err)
	}
	s, err := StartService(ctx, "mcpchaos/none:never-built-"+NewImageSet().Tag(), nil, addr, "/healthz", nil)
	if err == nil {
		_ = s.Stop(ctx)
		t.Fatal("a service of an image never built started")
	}
	if !strings.HasPrefix(err.Error(), "service:mcpchaos/none:") ||
		!strings.Contains(err.Error(), dockerScriptPath+" start") && !strings.Contains(err.Error(), "never pulled: build it first") {
		t.Errorf("the error does not say what to do: %v", err)
	}
}
