//go:build unix

package mutants

import (
	"os/exec"
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
