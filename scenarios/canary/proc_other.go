//go:build !unix

package canary

import (
	"os"
	"os/exec"
)

// ownGroup: without process groups, stopping cmd stops cmd alone.
func ownGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

// claimSlot: without file locks, each copy gets a fresh temp dir.
func claimSlot() (dir string, release func(), err error) {
	dir, err = os.MkdirTemp("", "mcpchaos-canary-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
