package harness

import (
	"context"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"
)

// helperListenEnv makes this test binary a stand-in proxy: it listens on
// the address the variable holds and answers 200 on every path until it is
// killed (TestHelperListen).
const helperListenEnv = "MCPCHAOS_HELPER_LISTEN"

const helperLifetime = 30 * time.Second

// TestHelperListen is not a test: it is the stand-in proxy the spawn tests
// start, doing nothing unless helperListenEnv is set.
func TestHelperListen(t *testing.T) {
	addr := os.Getenv(helperListenEnv)
	if addr == "" {
		return
	}
	// Bounded, should the test that started it die before it kills it.
	time.AfterFunc(helperLifetime, func() { os.Exit(0) })
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		os.Exit(3)
	}
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	os.Exit(0)
}

// squatterServer listens on a free loopback port and answers 200 on every
// path, as any HTTP server that took a proxy's port would.
func squatterServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

func spawnOn(ctx context.Context, t *testing.T, addr string, argv ...string) (*process, error) {
	t.Helper()
	return spawn(ctx, procSpec{argv: argv, env: append(os.Environ(), helperListenEnv+"="+addr), addr: addr, log: newTailBuffer(1 << 12)},
		"GET /healthz", healthProbe("http://"+addr+"/healthz"))
}

// The check must not refuse the proxy itself, nor a proxy started by a
// wrapper (a shell, npx) that listens from a child process.
func TestAProxyListeningItselfOrFromAChildIsReady(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for name, argv := range map[string][]string{
		"itself":  {os.Args[0], "-test.run=^TestHelperListen$"},
		"a child": {"/bin/sh", "-c", `"$0" -test.run='^TestHelperListen$'; exit $?`, os.Args[0]},
	} {
		addr, err := freeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		p, err := spawnOn(ctx, t, addr, argv...)
		if err != nil {
			t.Fatalf("%s: spawn: %v", name, err)
		}
		below := descendants(p.cmd.Process.Pid)[1:] // the wrapper's child outlives a SIGKILL of the wrapper
		if len(argv) > 2 && len(below) == 0 {
			t.Errorf("%s: the wrapper has no child process: the case proves nothing", name)
		}
		if err := p.kill(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, q := range below {
			_ = syscall.Kill(q, syscall.SIGKILL)
		}
	}
}
