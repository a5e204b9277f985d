//go:build unix

package canary

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, and makes stopping it
// stop the group: `go run ginkgo` and mcpchaos start the processes that do
// the work (test binaries, proxies) as children.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup stops whatever cmd's group still runs after cmd exited.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// maxSlots bounds the module copies that exist at once on the machine.
const maxSlots = 8

// claimSlot returns a directory for one copy of the module, held until
// release. Slots have fixed paths ($TMPDIR/mcpchaos-canary/slot-N) because
// the build cache keys the main module's packages by directory: the next
// canary run in a slot compiles only what changed (warm runs). A lock file
// keeps concurrent runs out of each other's slots.
func claimSlot() (dir string, release func(), err error) {
	root := filepath.Join(os.TempDir(), "mcpchaos-canary")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", nil, err
	}
	for i := range maxSlots {
		dir := filepath.Join(root, fmt.Sprintf("slot-%d", i))
		f, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return "", nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			_ = f.Close()
			continue // another canary holds it
		}
		if err := os.RemoveAll(dir); err != nil {
			_ = f.Close()
			return "", nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			_ = f.Close()
			return "", nil, err
		}
		return dir, func() { _ = os.RemoveAll(dir); _ = f.Close() }, nil
	}
	return "", nil, fmt.Errorf("all %d copy slots under %s are in use by other canary runs", maxSlots, root)
}
