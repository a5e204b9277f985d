package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// The one lifecycle of the targets that run the proxy outside the test
// process (Binary, Container, Foreign): start on a fresh loopback port
// (startFresh), wait until ready (pollReady, the one readiness wait), stop
// gracefully or kill (an instance's halt), and start again on the same
// address (cycle, for Restart and KillRestart). A target supplies only what
// differs: how one instance of its proxy is spawned, halted and resumed.

// instance is one started proxy of a target, as cycle drives it.
type instance struct {
	// halt ends it: gracefully (SIGTERM or docker stop, SIGKILL after a
	// grace) or not (SIGKILL). A proxy that had exited on its own is an error.
	halt func(ctx context.Context, graceful bool) error
	// resume starts it again on its address and waits until it is ready.
	resume func(ctx context.Context) error
}

// cycle halts a started target's proxy and resumes it on the same address,
// retrying while the address is still taken (or the proxy fails to come up)
// for up to rebindWindow: Restart (graceful) and KillRestart of every
// out-of-process target. started is false before Start.
func cycle(ctx context.Context, name string, started, graceful bool, in instance) error {
	op := "restart"
	if !graceful {
		op = "kill-restart"
	}
	if !started {
		return fmt.Errorf("%s: %s before start", name, op)
	}
	if err := in.halt(ctx, graceful); err != nil {
		return fmt.Errorf("%s: %s: %w", name, op, err)
	}
	if err := rebind(ctx, in.resume); err != nil {
		return fmt.Errorf("%s: %s: %w", name, op, err)
	}
	return nil
}

// rebind calls resume until it succeeds or rebindWindow has passed: the
// address a proxy just left may still be taken for a moment.
func rebind(ctx context.Context, resume func(context.Context) error) error {
	deadline := time.Now().Add(rebindWindow)
	for {
		err := resume(ctx)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(rebindPause):
		}
	}
}

// startFresh calls start on a fresh free loopback address, trying another
// (up to freshPortTries) when the address was taken meanwhile.
func startFresh(start func(addr string) error) error {
	var err error
	for range freshPortTries {
		addr, ferr := freeLoopbackAddr()
		if ferr != nil {
			return ferr
		}
		if err = start(addr); !errors.Is(err, errAddrInUse) {
			return err
		}
	}
	return err
}

// errAddrInUse marks a start that failed because the address was taken.
var errAddrInUse = errors.New("address already in use")

// process is one run of an executable (a Binary's mcplocal, a Foreign
// command).
type process struct {
	cmd  *exec.Cmd
	addr string
	out  *tailBuffer   // this run's output alone
	done chan struct{} // closed once Wait returned
	err  error         // Wait's result; read after done
}

// procSpec is what spawn starts: argv in dir with env, listening on addr; its
// output goes to log (every run of the target) and stderr (if set).
type procSpec struct {
	argv   []string
	dir    string
	env    []string
	addr   string
	log    *tailBuffer
	stderr io.Writer
}

// spawn starts one process and, once it is ready by probe (what names the
// probe in errors), returns it. On failure no process is left; an error
// wrapping errAddrInUse means the address was taken.
func spawn(ctx context.Context, s procSpec, what string, probe func(context.Context, *http.Client) bool) (*process, error) {
	p := &process{addr: s.addr, out: newTailBuffer(binaryProcLogBytes), done: make(chan struct{})}
	w := io.MultiWriter(p.out, s.log, ignoreErrors{s.stderr})
	p.cmd = exec.Command(s.argv[0], s.argv[1:]...)
	p.cmd.Dir = s.dir
	p.cmd.Env = s.env
	p.cmd.Stdout, p.cmd.Stderr = w, w
	p.cmd.WaitDelay = 2 * time.Second // a leaked pipe holder cannot block Wait
	p.cmd.SysProcAttr = dieWithParent()
	fmt.Fprintf(s.log, "--- mcpchaos: starting %s on %s ---\n", strings.Join(s.argv, " "), s.addr)
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		fmt.Fprintf(s.log, "--- mcpchaos: pid %d ended: %v ---\n", p.cmd.Process.Pid, exitText(p.err))
		close(p.done)
	}()
	if err := pollReady(ctx, what, probe, p.alive(what), p.out.String); err != nil {
		return nil, errors.Join(err, p.kill())
	}
	// The probe may have been answered by whoever took the address before
	// this process could bind it.
	if who, known := squatter(s.addr, p.cmd.Process.Pid); known && who != "" {
		return nil, errors.Join(fmt.Errorf("%w: %s answered %s in its place", errAddrInUse, who, what), p.kill())
	}
	return p, nil
}

// alive is pollReady's liveness check of p: an error once it has exited
// (wrapping errAddrInUse when its output says the address was taken).
func (p *process) alive(what string) func(context.Context) error {
	return func(context.Context) error {
		select {
		case <-p.done:
			err := fmt.Errorf("pid %d exited before %s answered: %s\n%s", p.cmd.Process.Pid, what, exitText(p.err), p.out)
			if strings.Contains(p.out.String(), "address already in use") {
				err = fmt.Errorf("%w: %w", errAddrInUse, err)
			}
			return err
		default:
			return nil
		}
	}
}

// stop ends the process: SIGTERM and up to grace for it to exit (graceful),
// or SIGKILL. A process that had exited on its own, a graceful stop that had
// to be forced, and a cancelled ctx are errors; with strictExit, so is a
// non-zero exit status after SIGTERM. The process is gone in every case.
func (p *process) stop(ctx context.Context, graceful bool, grace time.Duration, strictExit bool) error {
	select {
	case <-p.done:
		return fmt.Errorf("pid %d had exited on its own: %s\n%s", p.cmd.Process.Pid, exitText(p.err), p.out)
	default:
	}
	if !graceful {
		return p.kill()
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return errors.Join(fmt.Errorf("SIGTERM: %w", err), p.kill())
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-p.done:
		if strictExit && p.err != nil {
			return fmt.Errorf("pid %d: graceful stop: %s\n%s", p.cmd.Process.Pid, exitText(p.err), p.out)
		}
		return nil
	case <-timer.C:
		return errors.Join(fmt.Errorf("pid %d did not stop within %v of SIGTERM; killed\n%s", p.cmd.Process.Pid, grace, p.out), p.kill())
	case <-ctx.Done():
		return errors.Join(fmt.Errorf("pid %d: graceful stop: %w; killed", p.cmd.Process.Pid, ctx.Err()), p.kill())
	}
}

// kill sends SIGKILL and waits for the process to be reaped.
func (p *process) kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("SIGKILL pid %d: %w", p.cmd.Process.Pid, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(reapCap):
		return fmt.Errorf("pid %d not reaped %v after SIGKILL", p.cmd.Process.Pid, reapCap)
	}
}

// pollReady is the one readiness wait: it runs probe every readyPoll until it
// answers true, bounded by ctx and readyCap. Every stateEvery probes it calls
// alive, whose error ends the wait (the proxy died); a probe that answers
// while alive fails means something else answered on the address. logs
// renders the proxy's output for a timeout error; what names the probe.
func pollReady(ctx context.Context, what string, probe func(context.Context, *http.Client) bool, alive func(context.Context) error, logs func() string) error {
	ctx, cancel := context.WithTimeout(ctx, readyCap)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for i := 0; ; i++ {
		if probe(ctx, client) {
			return alive(ctx) // nil, unless something else answered on the address
		}
		if i%stateEvery == 0 {
			if err := alive(ctx); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready: %w\n%s", what, ctx.Err(), logs())
		case <-tick.C:
		}
	}
}

// healthProbe is the probe of an HTTP health path: GET url answers 200.
func healthProbe(url string) func(context.Context, *http.Client) bool {
	return func(ctx context.Context, c *http.Client) bool { return healthz(ctx, c, url) }
}

func healthz(ctx context.Context, c *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// freeLoopbackAddr asks the kernel for a free loopback port and releases it
// for the process to bind (which may race with another binder: startFresh
// retries).
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
