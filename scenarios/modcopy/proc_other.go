//go:build !unix

package modcopy

import (
	"os"
	"os/exec"
)

// ownGroup: without process groups, stopping cmd stops cmd alone.
func ownGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

// ClaimSlot: without file locks, each copy gets a fresh temp dir (and
// compiles the module's own packages afresh); release removes it.
func ClaimSlot(kind string, _ int) (dir string, release func(), err error) {
	dir, err = os.MkdirTemp("", kind+"-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}
