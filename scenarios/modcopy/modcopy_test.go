package modcopy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/testtree"
)

// gitModule is a module in a git work tree of its own, built from files
// (path: content); a .gitignore among them is honoured. Only the files in
// track are committed; the rest are new.
func gitModule(t *testing.T, files map[string]string, track ...string) string {
	t.Helper()
	dir := t.TempDir()
	testtree.Write(t, dir, files)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	if len(track) > 0 {
		git(append([]string{"add", "--"}, track...)...)
		git("commit", "-q", "-m", "files")
	}
	return dir
}

// Find lists what git lists, new files not yet added included (a test
// written but not committed counts), each once, and not what git ignores;
// it pins the environment a copy builds in.
func TestFindListsTrackedAndNewFiles(t *testing.T) {
	ctx := context.Background()
	dir := gitModule(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n", "a.go": "package m\n", "sub/new_test.go": "package m\n",
		".gitignore": "ignored.txt\n", "ignored.txt": "x",
	}, "go.mod", "a.go", ".gitignore")
	// A tracked file edited but not staged is still listed once.
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package m // edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Find(ctx, filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	if root, _ := filepath.EvalSymlinks(dir); m.Root != dir && m.Root != root {
		t.Errorf("Root %s, want the module's directory %s", m.Root, dir)
	}
	files := slices.Sorted(slices.Values(m.Files))
	if want := []string{".gitignore", "a.go", "go.mod", "sub/new_test.go"}; !slices.Equal(files, want) {
		t.Errorf("Files %q, want %q (each once, the ignored file left out)", files, want)
	}
	if m.GoVersion == "" || !strings.HasPrefix(m.GoVersion, "go") {
		t.Errorf("GoVersion = %q", m.GoVersion)
	}
	for _, want := range []string{"GOWORK=off", "GOCACHE=", "GOMODCACHE=", "GOFLAGS="} {
		if !slices.ContainsFunc(m.Env, func(kv string) bool { return strings.HasPrefix(kv, want) }) {
			t.Errorf("Env lacks %s", want)
		}
	}
}

// Find refuses, saying why: a directory in no module, a module git does
// not know, a module whose go.mod git does not list.
func TestFindSaysWhyItCannotCopy(t *testing.T) {
	ctx := context.Background()
	if _, err := Find(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not inside a Go module") {
		t.Errorf("outside any module: %v", err)
	}
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(ctx, plain); err == nil || !strings.Contains(err.Error(), "git ls-files") {
		t.Errorf("a module outside git: %v", err)
	}
	ignored := gitModule(t, map[string]string{"go.mod": "module example.com/m\n", ".gitignore": "go.mod\n", "a.go": "package m\n"})
	if _, err := Find(ctx, ignored); err == nil || !strings.Contains(err.Error(), "does not list go.mod") {
		t.Errorf("go.mod ignored by git: %v", err)
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
	// At the edges: exactly the limit is kept whole; one write of three
	// times the limit keeps its last limit bytes.
	tb = NewTailBuffer(4)
	_, _ = tb.Write([]byte("abcd"))
	if got := tb.String(); got != "abcd" {
		t.Errorf("exactly the limit: %q", got)
	}
	_, _ = tb.Write([]byte("efgh"))
	if got := tb.String(); got != "efgh" {
		t.Errorf("twice the limit: %q", got)
	}
	_, _ = tb.Write([]byte("ijklmnopqrst"))
	if got := tb.String(); got != "qrst" {
		t.Errorf("three times the limit in one write: %q", got)
	}
}

// Run writes the command it runs to the log before its output, and stops
// the children a command that exited left running.
func TestRunLogsTheCommandAndStopsWhatItLeftRunning(t *testing.T) {
	dir := t.TempDir()
	var log strings.Builder
	r := Run(context.Background(), dir, os.Environ(), time.Minute, &log, "sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $! > child.pid; echo done")
	if r.Failed() || !strings.Contains(r.Out, "done") {
		t.Fatalf("%+v", r)
	}
	if want := "\n$ (cd " + dir + " && sh -c sleep 60"; !strings.HasPrefix(log.String(), want) || !strings.HasSuffix(log.String(), "done\n") {
		t.Errorf("log %q, want the command line, then the output", log.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	for deadline := time.Now().Add(2 * time.Second); alive(pid); {
		if time.Now().After(deadline) {
			t.Errorf("the background child %s still runs after its command exited", pid)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive: /proc has pid, and it is no zombie awaiting its reaper.
func alive(pid string) bool {
	st, err := os.ReadFile("/proc/" + pid + "/stat")
	return err == nil && !strings.Contains(string(st), ") Z ")
}
