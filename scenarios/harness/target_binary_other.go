//go:build !linux

package harness

import "syscall"

// dieWithParent has no kernel help off Linux: Stop is the only cleanup.
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
