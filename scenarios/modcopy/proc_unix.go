//go:build unix

package modcopy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, and makes stopping it
// stop the group.
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

// ClaimSlot returns a directory for one copy of the module
// ($TMPDIR/KIND/slot-N, N below max), held until release. Its path is
// fixed, so the build cache keeps what an earlier copy there compiled; a
// lock file keeps every other run on the machine (of any process) out of
// it while it is held. What the slot holds is left as it was: the caller
// copies afresh (CopyTo) and removes what it wants gone.
func ClaimSlot(kind string, max int) (dir string, release func(), err error) {
	root := filepath.Join(os.TempDir(), kind)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", nil, err
	}
	for i := range max {
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
	return "", nil, fmt.Errorf("all %d copy slots under %s are in use", max, root)
}
