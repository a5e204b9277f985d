// Package modcopy copies the module under test into a slot of its own and
// runs commands there: the mutants (one patched copy per mutant) and the
// SDK canary (one switched copy per candidate) both build and test such
// copies.
//
// A copy holds the files git lists (tracked, plus new files not ignored),
// so uncommitted work counts, as it does for `go build` in the work tree.
// Slots have fixed, locked paths ($TMPDIR/KIND/slot-N): without -trimpath
// (which the Makefile sets) the build cache keys the main module's packages
// by directory, so the next copy in a slot still compiles only what changed. Commands run in a process group of their own,
// bounded in time, and the whole group is stopped when they end.
package modcopy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Bounds of the commands Run runs.
const (
	OutputTail   = 256 << 10        // bytes of a command's output Result.Out keeps
	cmdWaitDelay = 10 * time.Second // after the group is killed, for its pipes to close
)

// Module is a module under test: its root, the files a copy holds, and the
// environment its go commands run in.
type Module struct {
	Root      string   // the directory holding go.mod
	Files     []string // paths relative to Root, as git lists them
	GoFlags   string   // GOFLAGS as go env says (the env file included)
	GoVersion string   // the toolchain that builds it
	// Env is the environment of every command run for the module: the
	// process's, with the work tree's GOCACHE, GOMODCACHE and GOFLAGS
	// pinned (a copy reuses everything the work tree compiled) and
	// GOWORK=off (a copy is a module of its own).
	Env []string
}

// Find locates the module containing dir and lists its files.
func Find(ctx context.Context, dir string) (*Module, error) {
	vars := []string{"GOMOD", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOVERSION"}
	goenv := exec.CommandContext(ctx, "go", append([]string{"env"}, vars...)...)
	goenv.Dir = dir
	out, err := goenv.Output()
	if err != nil {
		return nil, fmt.Errorf("go env %s: %w", strings.Join(vars, " "), err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(vars) {
		return nil, fmt.Errorf("go env %s: unexpected output %q", strings.Join(vars, " "), out)
	}
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	gomod := lines[0]
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("%s is not inside a Go module", dir)
	}
	m := &Module{Root: filepath.Dir(gomod), GoFlags: lines[3], GoVersion: lines[4]}
	ls := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = m.Root
	var stderr bytes.Buffer
	ls.Stderr = &stderr
	list, err := ls.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s (a copy holds what git lists): %w: %s", m.Root, err, strings.TrimSpace(stderr.String()))
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(string(list), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			m.Files = append(m.Files, f)
		}
	}
	if !seen["go.mod"] {
		return nil, fmt.Errorf("git ls-files in %s does not list go.mod", m.Root)
	}
	m.Env = append(os.Environ(), "GOCACHE="+lines[1], "GOMODCACHE="+lines[2], "GOFLAGS="+lines[3], "GOWORK=off")
	return m, nil
}

// CopyTo makes dst a fresh copy of the module's files (whatever dst held
// before is removed), keeping modes and symlinks. Files git lists but the
// work tree no longer has are skipped.
func (m *Module) CopyTo(dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	for _, f := range m.Files {
		src := filepath.Join(m.Root, f)
		st, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		to := filepath.Join(dst, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			b, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, st.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}

// Result is what one command did.
type Result struct {
	Exit     int  // its exit status; -1 when it did not exit by itself
	TimedOut bool // still running at the timeout, and stopped
	Err      error
	Out      string // the tail of its combined output (OutputTail bytes)
	Took     time.Duration
}

// Failed reports whether the command did not run to a zero exit.
func (r Result) Failed() bool { return r.Err != nil || r.TimedOut || r.Exit != 0 }

// Run runs args in dir with env, bounded by timeout, in a process group of
// its own that is stopped whole when the command ends or times out (`go
// run`, Ginkgo and mcpchaos start the processes that do the work as
// children). The output's tail is kept in Result.Out and, if log is set,
// copied there in full after a "$ (cd DIR && ARGS)" line. Result.Err is
// set when the command could not start or ctx ended first.
func Run(ctx context.Context, dir string, env []string, timeout time.Duration, log io.Writer, args ...string) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	tail := NewTailBuffer(OutputTail)
	var out io.Writer = tail
	if log != nil {
		fmt.Fprintf(log, "\n$ (cd %s && %s)\n", dir, strings.Join(args, " "))
		out = io.MultiWriter(tail, log)
	}
	cmd.Stdout, cmd.Stderr = out, out
	ownGroup(cmd)
	cmd.WaitDelay = cmdWaitDelay
	start := time.Now()
	err := cmd.Run()
	killGroup(cmd)
	r := Result{Exit: cmd.ProcessState.ExitCode(), Out: tail.String(), Took: time.Since(start)}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.TimedOut, r.Exit = true, -1
		r.Out += fmt.Sprintf("\n(stopped: still running after %v)", timeout)
	case ctx.Err() != nil:
		r.Err = ctx.Err()
	case err != nil && cmd.ProcessState == nil:
		r.Err = err
	}
	if r.Err != nil && r.Out == "" {
		r.Out = r.Err.Error()
	}
	return r
}

// TailBuffer keeps the last limit bytes written to it; safe for concurrent
// use.
type TailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

// NewTailBuffer keeps the last limit bytes.
func NewTailBuffer(limit int) *TailBuffer { return &TailBuffer{limit: limit} }

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.limit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.limit:]...)
	}
	return len(p), nil
}

// String is what is kept.
func (t *TailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.limit {
		return string(t.buf[len(t.buf)-t.limit:])
	}
	return string(t.buf)
}
