package modcopy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Find lists what git lists, new files not yet added included (a test
// written but not committed counts), and pins the environment a copy
// builds in.
func TestFindListsTrackedAndNewFiles(t *testing.T) {
	ctx := context.Background()
	m, err := Find(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(m.Root, "go.mod")); err != nil {
		t.Fatalf("Root %s holds no go.mod", m.Root)
	}
	for _, want := range []string{"go.mod", "scenarios/modcopy/modcopy.go"} {
		if !slices.Contains(m.Files, want) {
			t.Errorf("Files lacks %s", want)
		}
	}
	if m.GoVersion == "" || !strings.HasPrefix(m.GoVersion, "go") {
		t.Errorf("GoVersion = %q", m.GoVersion)
	}
	for _, want := range []string{"GOWORK=off", "GOCACHE=", "GOMODCACHE=", "GOFLAGS="} {
		if !slices.ContainsFunc(m.Env, func(kv string) bool { return strings.HasPrefix(kv, want) }) {
			t.Errorf("Env lacks %s", want)
		}
	}
	if _, err := Find(ctx, t.TempDir()); err == nil {
		t.Error("Find outside any module succeeded")
	}
}

// CopyTo makes a fresh copy: contents, modes and symlinks kept, files
// deleted from the work tree skipped, and nothing left of what dst held.
func TestCopyToKeepsModesAndLinksAndStartsFresh(t *testing.T) {
	root, dst := t.TempDir(), filepath.Join(t.TempDir(), "src")
	write := func(name, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/app\n", 0o644)
	write("scripts/run.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("scripts/run.sh", filepath.Join(root, "run")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "stale.go"), []byte("package stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Module{Root: root, Files: []string{"go.mod", "scripts/run.sh", "run", "deleted.go"}}
	if err := m.CopyTo(dst); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "go.mod")); err != nil || string(b) != "module example.com/app\n" {
		t.Errorf("go.mod: %q %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dst, "scripts/run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("scripts/run.sh lost its mode: %v %v", st, err)
	}
	if target, err := os.Readlink(filepath.Join(dst, "run")); err != nil || target != "scripts/run.sh" {
		t.Errorf("run is not the same link: %q %v", target, err)
	}
	for _, gone := range []string{"deleted.go", "stale.go"} {
		if _, err := os.Lstat(filepath.Join(dst, gone)); err == nil {
			t.Errorf("%s is in the copy", gone)
		}
	}
}

// A held slot is nobody else's; a released one is reused at the same path
// (the build cache's warmth depends on it).
func TestClaimSlotIsExclusiveAndReused(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	a, releaseA, err := ClaimSlot("modcopy-test", 2)
	if err != nil {
		t.Fatal(err)
	}
	b, releaseB, err := ClaimSlot("modcopy-test", 2)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("two holders got slot %s", a)
	}
	if _, _, err := ClaimSlot("modcopy-test", 2); err == nil {
		t.Error("a third claim of two slots succeeded")
	}
	releaseA()
	again, releaseAgain, err := ClaimSlot("modcopy-test", 2)
	if err != nil {
		t.Fatal(err)
	}
	if again != a {
		t.Errorf("after release the claim got %s, want the freed %s", again, a)
	}
	releaseAgain()
	releaseB()
}

// Run reports the exit status and output; a command past its timeout is
// stopped with every process it started (a child left in the background
// would outlive a canary or mutant run otherwise).
func TestRunBoundsTheWholeProcessGroup(t *testing.T) {
	ctx := context.Background()
	r := Run(ctx, t.TempDir(), os.Environ(), time.Minute, nil, "sh", "-c", "echo out; echo err >&2; exit 3")
	if r.Exit != 3 || !r.Failed() || !strings.Contains(r.Out, "out") || !strings.Contains(r.Out, "err") || r.TimedOut {
		t.Errorf("exit 3: %+v", r)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	const timeout = 500 * time.Millisecond
	r = Run(ctx, dir, os.Environ(), timeout, nil, "sh", "-c", "sleep 60 & echo $! > child.pid; wait")
	if !r.TimedOut || r.Exit != -1 || !strings.Contains(r.Out, "stopped: still running after") {
		t.Fatalf("a command past its timeout: %+v", r)
	}
	// Budget: the timeout plus cmdWaitDelay for the pipes, and a second of
	// slack for a loaded machine.
	if limit := timeout + cmdWaitDelay + time.Second; r.Took > limit {
		t.Errorf("took %v, want at most %v", r.Took, limit)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	// SIGKILL is delivered at once, but the orphan is reaped by whoever
	// adopts it: give that a bounded moment.
	for deadline := time.Now().Add(2 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			st, _ := os.ReadFile("/proc/" + pid + "/stat")
			t.Errorf("the background child %s still runs after the timeout: %s", pid, st)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := Run(ctx, dir, os.Environ(), time.Minute, nil, "/does/not/exist"); r.Err == nil || !r.Failed() || r.Out == "" {
		t.Errorf("a command that cannot start: %+v", r)
	}
}

func TestTailBufferKeepsTheTail(t *testing.T) {
	tb := NewTailBuffer(8)
	for range 10 {
		_, _ = tb.Write([]byte("0123456789"))
	}
	if got := tb.String(); got != "23456789" {
		t.Errorf("kept %q, want the last 8 bytes", got)
	}
}

// alive: /proc has pid, and it is no zombie awaiting its reaper.
func alive(pid string) bool {
	st, err := os.ReadFile("/proc/" + pid + "/stat")
	return err == nil && !strings.Contains(string(st), ") Z ")
}
