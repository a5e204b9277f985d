//go:build linux

package harness

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Who holds a port is read from /proc: the check, and this test, are
// Linux's (elsewhere readiness rests on the probe and the process alone).

// A port picked free can be taken by another process before the proxy
// binds it. If that process answers HTTP, the readiness probe passes on its
// answer: the start must still fail (as the address taken, so the target
// picks another), never hand the scenario a stranger.
func TestAProbeAnsweredByAnotherProcessIsNotReadiness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	addr := squatterServer(t)
	// A proxy still starting (it has not bound yet, or never will).
	p, err := spawnOn(ctx, t, addr, sleep, "30")
	if !errors.Is(err, errAddrInUse) {
		if p != nil {
			_ = p.kill()
		}
		t.Fatalf("spawn on an address another process answers returned %v, want an error wrapping errAddrInUse", err)
	}
	// A proxy that failed to bind and exited: the same.
	p, err = spawnOn(ctx, t, addr, os.Args[0], "-test.run=^TestHelperListen$")
	if !errors.Is(err, errAddrInUse) {
		if p != nil {
			_ = p.kill()
		}
		t.Fatalf("spawn of a proxy that could not bind returned %v, want an error wrapping errAddrInUse", err)
	}
}
