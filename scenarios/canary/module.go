package canary

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

// Bounds of the commands the canary runs.
const (
	outputTail     = 256 << 10 // bytes of a command's output kept
	compilerLines  = 12        // lines of a failed build shown as its result
	cmdWaitDelay   = 10 * time.Second
	defaultCommand = 15 * time.Minute // one build step or one suite run, when Options.Timeout is 0
)

// module is the module under test: its root and the files a copy holds.
type module struct {
	root      string
	files     []string
	goflags   string   // as go env says (the env file included)
	goversion string   // the toolchain that builds both sides
	env       []string // the environment every go command runs in
}

// findModule locates the module containing dir and lists the files a copy
// needs: what git tracks plus new files not ignored, so uncommitted work
// counts (the same files `go build` sees in the work tree).
func findModule(ctx context.Context, dir string) (*module, error) {
	cmd := exec.CommandContext(ctx, "go", "env", "GOMOD", "GOFLAGS", "GOVERSION")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMOD GOFLAGS GOVERSION: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("go env GOMOD GOFLAGS GOVERSION: unexpected output %q", out)
	}
	gomod := strings.TrimSpace(lines[0])
	if gomod == "" || gomod == os.DevNull {
		return nil, fmt.Errorf("%s is not inside a Go module", dir)
	}
	m := &module{root: filepath.Dir(gomod), goflags: strings.TrimSpace(lines[1]), goversion: strings.TrimSpace(lines[2]), env: append(os.Environ(), "GOWORK=off")}
	ls := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = m.root
	var stderr bytes.Buffer
	ls.Stderr = &stderr
	list, err := ls.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files in %s (the canary copies what git lists): %w: %s", m.root, err, strings.TrimSpace(stderr.String()))
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(string(list), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			m.files = append(m.files, f)
		}
	}
	if !seen["go.mod"] {
		return nil, fmt.Errorf("git ls-files in %s does not list go.mod", m.root)
	}
	return m, nil
}

// copyTo copies the module's files into dst, keeping modes and symlinks.
func (m *module) copyTo(dst string) error {
	for _, f := range m.files {
		src := filepath.Join(m.root, f)
		st, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // listed by git, deleted in the work tree
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

// linkNodeModules links the work tree's installed npm dependencies
// (tools/*/node_modules, ignored by git, so not copied) into the copy at
// dst: the npm clients and the conformance suite run there without a fresh
// npm ci. Their versions are the lockfiles', the same on both sides.
func (m *module) linkNodeModules(dst string) error {
	dirs, _ := filepath.Glob(filepath.Join(m.root, "tools", "*", "node_modules"))
	for _, d := range dirs {
		rel, err := filepath.Rel(m.root, d)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if _, err := os.Lstat(to); err == nil {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(d, to); err != nil {
			return err
		}
	}
	return nil
}

// BuildError is a side that could not be built: the step that failed and
// its output. For a candidate it is the canary's result, not a crash.
type BuildError struct {
	Step   string
	Output string
}

func (e *BuildError) Error() string {
	return fmt.Sprintf("%s failed:\n%s", e.Step, e.FirstLines())
}

// FirstLines are the compiler's (or go get's) first lines: what a reader
// needs to see why the candidate does not build.
func (e *BuildError) FirstLines() string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(e.Output), "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "go: downloading") {
			continue
		}
		keep = append(keep, l)
		if len(keep) == compilerLines {
			break
		}
	}
	return strings.Join(keep, "\n")
}

// cmdResult is what one command did.
type cmdResult struct {
	exit     int // -1 when it did not exit by itself
	timedOut bool
	err      error // could not start, or the caller's ctx ended
	out      string
	took     time.Duration
}

func (r cmdResult) failed() bool { return r.err != nil || r.timedOut || r.exit != 0 }

// runCmd runs args in dir with env, bounded by timeout (0: defaultCommand),
// its combined output's tail kept and copied to log if set.
func runCmd(ctx context.Context, dir string, env []string, timeout time.Duration, log io.Writer, args ...string) cmdResult {
	if timeout <= 0 {
		timeout = defaultCommand
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	tail := &tailBuffer{limit: outputTail}
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
	r := cmdResult{exit: -1, out: tail.String(), took: time.Since(start)}
	if cmd.ProcessState != nil {
		r.exit = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		r.timedOut = true
		r.out += fmt.Sprintf("\n(stopped: still running after %v)", timeout)
	case ctx.Err() != nil:
		r.err = ctx.Err()
	case err != nil && cmd.ProcessState == nil:
		r.err = err
	}
	if r.err != nil && r.out == "" {
		r.out = r.err.Error()
	}
	return r
}

// tailBuffer keeps the last limit bytes written; safe for concurrent use.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.limit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.limit:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) > t.limit {
		return string(t.buf[len(t.buf)-t.limit:])
	}
	return string(t.buf)
}
