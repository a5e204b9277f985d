package harness

import "syscall"

// dieWithParent asks the kernel to SIGKILL the proxy when the test process
// dies, so a crashed or killed test run leaves no proxy behind.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
