//go:build unix

package mutants

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, and makes stopping it
// stop the group: `go run` and Ginkgo start the processes that do the work
// (the built binary, the test binary, the proxies it starts) as children.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup stops whatever cmd's group still runs after cmd itself exited
// (a child it left behind).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// maxSlots bounds the copies that can exist at once, across every run on
// the machine.
const maxSlots = 16

// claimSlot returns a directory for one copy of the module, held until
// release. Slots have fixed paths ($TMPDIR/mcpchaos-mutants/slot-N): the build
// cache keys the main module's packages by their directory, so a copy in a
// slot reuses everything an earlier copy there compiled, and only what its
// patch touches is compiled again. A lock file keeps concurrent runs (and
// Build) out of each other's slots.
func claimSlot() (dir string, release func(), err error) {
	root := filepath.Join(os.TempDir(), "mcpchaos-mutants")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", nil, err
	}
	for i := 0; i < maxSlots; i++ {
		dir := filepath.Join(root, fmt.Sprintf("slot-%d", i))
		f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return "", nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			continue // another copy holds it
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			_ = f.Close()
			return "", nil, err
		}
		return dir, func() { _ = f.Close() }, nil // closing the file releases the lock
	}
	return "", nil, fmt.Errorf("all %d copy slots under %s are in use", maxSlots, root)
}
