package canary

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/modcopy"
)

// Bounds of the commands the canary runs.
const (
	compilerLines  = 12               // lines of a failed build shown as its result
	defaultCommand = 15 * time.Minute // one build step or one suite run, when Options.Timeout is 0
	slotKind       = "mcpchaos-canary"
	maxSlots       = 8 // module copies that exist at once on the machine
)

// claimSlot is a directory for one copy of the module, with its fixed path
// (see modcopy.ClaimSlot): the next canary run in a slot compiles only what
// changed. release removes the copy and frees the slot.
func claimSlot() (dir string, release func(), err error) {
	slot, free, err := modcopy.ClaimSlot(slotKind, maxSlots)
	if err != nil {
		return "", nil, fmt.Errorf("%w (other canary runs hold them)", err)
	}
	dir = filepath.Join(slot, "src")
	return dir, func() { _ = os.RemoveAll(dir); free() }, nil
}

// linkNodeModules links the work tree's installed npm dependencies
// (tools/*/node_modules, ignored by git, so not copied) into the copy at
// dst: the npm clients and the conformance suite run there without a fresh
// npm ci. Their versions are the lockfiles', the same on both sides.
func linkNodeModules(m *modcopy.Module, dst string) error {
	dirs, _ := filepath.Glob(filepath.Join(m.Root, "tools", "*", "node_modules"))
	for _, d := range dirs {
		rel, err := filepath.Rel(m.Root, d)
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

// runCmd runs args in dir with env, bounded by timeout (0: defaultCommand),
// its whole process group stopped when it ends (modcopy.Run).
func runCmd(ctx context.Context, dir string, env []string, timeout time.Duration, log io.Writer, args ...string) modcopy.Result {
	if timeout <= 0 {
		timeout = defaultCommand
	}
	return execute(ctx, dir, env, timeout, log, args...)
}

// execute runs one command of the canary: every build step, switch, npm
// install and suite run goes through it. It is modcopy.Run; a package test
// puts a fake build and suite in its place to hold Run to its promises.
var execute = modcopy.Run
