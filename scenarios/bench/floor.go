package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"time"
)

// FloorProcess is a plain reverse proxy (package fakes/floor) started for a
// benchmark as its own process, so that its RSS is its own.
type FloorProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
	// URL is the upstream's MCP endpoint as reached through the floor.
	URL string
}

// StartFloor runs `exe fake floor --listen ADDR --upstream upstreamURL`
// (exe: an mcpchaos binary) on a free loopback port and waits until it
// accepts connections. stderr gets the process's output (nil discards).
func StartFloor(ctx context.Context, exe, upstreamURL string, stderr io.Writer) (*FloorProcess, error) {
	u, err := url.Parse(upstreamURL)
	if err != nil {
		return nil, fmt.Errorf("floor: upstream %q: %w", upstreamURL, err)
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if stderr == nil {
		stderr = io.Discard
	}
	f := &FloorProcess{done: make(chan struct{}), URL: "http://" + addr + u.EscapedPath()}
	f.cmd = exec.Command(exe, "fake", "floor", "--listen", addr, "--upstream", upstreamURL)
	f.cmd.Env = os.Environ()
	f.cmd.Stdout, f.cmd.Stderr = stderr, stderr
	f.cmd.WaitDelay = 2 * time.Second
	if err := f.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = f.cmd.Wait(); close(f.done) }()
	sctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	for {
		if c, err := (&net.Dialer{}).DialContext(sctx, "tcp", addr); err == nil {
			c.Close()
			return f, nil
		}
		select {
		case <-f.done:
			return nil, fmt.Errorf("%s fake floor exited before listening", exe)
		case <-sctx.Done():
			f.Stop()
			return nil, fmt.Errorf("%s fake floor: not listening within %v", exe, startTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// PID is the process id.
func (f *FloorProcess) PID() int { return f.cmd.Process.Pid }

// Stop ends the process (SIGTERM, then SIGKILL after 10 s). Stop may be
// called more than once.
func (f *FloorProcess) Stop() {
	select {
	case <-f.done:
	default:
		_ = f.cmd.Process.Signal(os.Interrupt)
		select {
		case <-f.done:
		case <-time.After(10 * time.Second):
			_ = f.cmd.Process.Kill()
			<-f.done
		}
	}
}
