package harness

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// shell starts a shell script as a process the lifecycle drives, on an
// address nobody listens on: it is ready once it printed "up 2" (echo "up
// $((1+1))", which its command line, also logged, does not spell).
func shell(t *testing.T, script string) *process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := newTailBuffer(1 << 12)
	p, err := spawn(ctx, procSpec{argv: []string{"/bin/sh", "-c", script}, addr: "127.0.0.1:1", log: log},
		"ready", func(context.Context, *http.Client) bool { return strings.Contains(log.String(), "up 2") })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.kill() })
	return p
}

// A graceful stop waits up to its grace for the process to end on SIGTERM,
// then kills it and says so; a non-zero exit is an error only when the
// target holds the proxy to a clean one; a cancelled stop kills.
func TestAGracefulStopIsBoundedAndSaysHowItEnded(t *testing.T) {
	ctx := context.Background()
	const loop = "echo up $((1+1)); while :; do sleep 0.05; done"

	p := shell(t, "trap '' TERM; "+loop)
	start := time.Now()
	err := p.stop(ctx, true, 300*time.Millisecond, false)
	if err == nil || !strings.Contains(err.Error(), "did not stop within 300ms of SIGTERM; killed") {
		t.Errorf("a process ignoring SIGTERM: %v", err)
	}
	if took := time.Since(start); took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("the stop took %v, want its grace of 300ms", took)
	}
	requireGone(t, p.cmd.Process.Pid)

	p = shell(t, "trap 'exit 3' TERM; "+loop)
	if err := p.stop(ctx, true, 5*time.Second, true); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("a strict stop of a process exiting 3: %v", err)
	}
	p = shell(t, "trap 'exit 3' TERM; "+loop)
	if err := p.stop(ctx, true, 5*time.Second, false); err != nil {
		t.Errorf("a lenient stop of a process exiting 3: %v", err)
	}
	p = shell(t, "trap 'exit 0' TERM; "+loop)
	if err := p.stop(ctx, true, 5*time.Second, true); err != nil {
		t.Errorf("a strict stop of a process exiting 0: %v", err)
	}

	p = shell(t, "trap '' TERM; "+loop)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = p.stop(cctx, true, time.Minute, false)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "killed") {
		t.Errorf("a stop whose context ends: %v", err)
	}
	requireGone(t, p.cmd.Process.Pid)

	p = shell(t, loop)
	if err := p.stop(ctx, false, time.Minute, true); err != nil {
		t.Errorf("a kill: %v", err)
	}
	requireGone(t, p.cmd.Process.Pid)
	if err := p.stop(ctx, true, time.Second, true); err == nil || !strings.Contains(err.Error(), "had exited on its own") {
		t.Errorf("a stop of a process already gone: %v", err)
	}
	if err := p.kill(); err != nil {
		t.Errorf("a kill of a process already reaped: %v", err)
	}

	p = shell(t, "echo up $((1+1)); sleep 0.3; exit 0")
	<-p.done
	if err := p.stop(ctx, true, time.Second, true); err == nil || !strings.Contains(err.Error(), "had exited on its own: exit status 0") {
		t.Errorf("a stop of a process that ended well on its own: %v", err)
	}
}

// The readiness wait ends when the probe answers, when the process dies,
// or at the context's end with the process's output.
func TestTheReadinessWaitEndsAsItShould(t *testing.T) {
	ctx := context.Background()
	never := func(context.Context, *http.Client) bool { return false }
	alive := func(context.Context) error { return nil }
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := pollReady(cctx, "GET /x", never, alive, func() string { return "the proxy's words" })
	cancel()
	if err == nil || !strings.Contains(err.Error(), "GET /x: not ready") || !strings.Contains(err.Error(), "the proxy's words") {
		t.Errorf("a probe that never answers: %v", err)
	}
	var looks atomic.Int32
	dead := errors.New("dead")
	err = pollReady(ctx, "GET /x", never, func(context.Context) error {
		if looks.Add(1) == 2 {
			return dead
		}
		return nil
	}, func() string { return "" })
	if !errors.Is(err, dead) {
		t.Errorf("a process dying while probed: %v", err)
	}
	var probes atomic.Int32
	if err := pollReady(ctx, "GET /x", func(context.Context, *http.Client) bool { return probes.Add(1) == 3 }, alive, func() string { return "" }); err != nil {
		t.Errorf("a probe answering on its third try: %v", err)
	}
	if err := pollReady(ctx, "GET /x", func(context.Context, *http.Client) bool { return true }, func(context.Context) error { return dead }, func() string { return "" }); !errors.Is(err, dead) {
		t.Errorf("a probe answered while the process is dead: %v", err)
	}
}

// A resume is retried while it fails, for the rebind window; a fresh start
// takes another port only while the address was taken.
func TestRebindAndStartFreshRetryOnlyWhatMayPass(t *testing.T) {
	ctx := context.Background()
	calls := 0
	if err := rebind(ctx, func(context.Context) error {
		calls++
		if calls < 3 {
			return errors.New("busy")
		}
		return nil
	}); err != nil || calls != 3 {
		t.Errorf("a resume passing on its third try: %v after %d calls", err, calls)
	}
	start := time.Now()
	if err := rebind(ctx, func(context.Context) error { return errors.New("busy") }); err == nil || time.Since(start) < rebindWindow {
		t.Errorf("a resume that never passes: %v after %v", err, time.Since(start))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := rebind(cctx, func(context.Context) error { return errors.New("busy") }); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "(last: busy)") {
		t.Errorf("a cancelled rebind: %v", err)
	}

	var addrs []string
	err := startFresh(func(addr string) error {
		addrs = append(addrs, addr)
		return errAddrInUse
	})
	if !errors.Is(err, errAddrInUse) || len(addrs) != freshPortTries {
		t.Errorf("an address always taken: %v after %d tries", err, len(addrs))
	}
	for _, a := range addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("a fresh address %q off loopback", a)
		}
	}
	tries := 0
	boom := errors.New("boom")
	if err := startFresh(func(string) error { tries++; return boom }); !errors.Is(err, boom) || tries != 1 {
		t.Errorf("another failure: %v after %d tries", err, tries)
	}
}

// Only listeners are a port's listeners: a connection on the same local
// port (one the listener accepted) is not one.
func TestListeningInodesAreTheListenersAlone(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	inodes, ok := listeningInodes(port)
	if !ok || len(inodes) != 1 {
		t.Fatalf("listeners on %d: %v (%v), want the one", port, inodes, ok)
	}
	if !socketInodes(os.Getpid())[inodes[0]] {
		t.Error("the listener is not among this process's sockets")
	}
	if who, known := squatter(ln.Addr().String(), os.Getpid()); !known || who != "" {
		t.Errorf("this process's own listener: %q, %v", who, known)
	}
	if who, known := squatter(ln.Addr().String(), 1<<30); !known || !strings.Contains(who, "listens on port") {
		t.Errorf("another process's listener: %q, %v", who, known)
	}
	for _, addr := range []string{"no port", "127.0.0.1:http"} {
		if _, known := squatter(addr, 1); known {
			t.Errorf("an address without a port number (%q) is known", addr)
		}
	}
	free, _ := freeLoopbackAddr()
	if who, known := squatter(free, 1<<30); !known || who != "" {
		t.Errorf("a port nobody listens on: %q, %v", who, known)
	}
}
