package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// Killer is implemented by targets that can also stop the proxy abruptly
// (SIGKILL: no drain, no audit flush) and start it again on the same address.
// Scenarios use it when the target supports it:
//
//	if k, ok := env.Target.(harness.Killer); ok { err = k.KillRestart(ctx) }
type Killer interface {
	KillRestart(ctx context.Context) error
}

// Timing bounds of the binary target.
const (
	binaryProcLogBytes = 64 << 10               // stderr kept per process, for errors
	binaryLogBytes     = 1 << 20                // default Binary.MaxLog
	failpointsEnv      = "MCPLOCAL_FAILPOINTS"  // read by cmd/mcplocal
	binaryConfigFile   = "mcplocal-target.yaml" // in the target's temp dir
)

// Binary runs the proxy under test as a built mcplocal process (see
// BuildMcplocal): `PATH serve --config FILE --listen ADDR`, with the spec's
// config written as YAML and its knobs passed as environment variables.
//
// The process's stderr (one log line per request, with its trace code) is kept
// in a bounded buffer, Logs, for failure reports, and copied to Stderr if set.
//
// Failpoints: the spec's failpoint set is rendered into MCPLOCAL_FAILPOINTS
// every time the process starts, so failpoints armed before Start are
// delivered, and failpoints armed later reach the process only at its next
// Restart or KillRestart. A running process cannot be re-armed.
type Binary struct {
	// Path of the mcplocal executable.
	Path string
	// Stderr, if set, also receives the process's stderr and stdout (for
	// example GinkgoWriter). Write errors are ignored.
	Stderr io.Writer
	// Env is appended to the process's environment ("KEY=VALUE"), for
	// tokenEnv and apiKeyEnv variables the config names.
	Env []string
	// MaxLog bounds Logs in bytes; default 1 MiB.
	MaxLog int
	// NoFailpointSwitch starts the process as production does: the spec's
	// failpoints are in its environment, but MCPLOCAL_ENABLE_FAILPOINTS=1,
	// the switch that says this is a test run, is not.
	NoFailpointSwitch bool
	// FDLimit, when not 0, is the open-file limit (ulimit -n, soft and
	// hard) the process starts under: /bin/sh sets it, then execs mcplocal
	// in its place (same pid).
	FDLimit uint64

	mu      sync.Mutex
	spec    Spec
	dir     string // temp dir holding the config file; "" when stopped
	cfgPath string
	addr    string
	proc    *process
	logOnce sync.Once
	log     *tailBuffer
}

var (
	_ Target = (*Binary)(nil)
	_ Killer = (*Binary)(nil)
)

// Name implements Target.
func (b *Binary) Name() string { return "binary:" + b.Path }

// URL implements Target.
func (b *Binary) URL() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return "http://" + b.addr
}

// PID is the running process's id, or 0 when none runs.
func (b *Binary) PID() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc == nil {
		return 0
	}
	return b.proc.cmd.Process.Pid
}

// Logs returns the captured stderr of every run so far (the most recent
// MaxLog bytes), with a marker line where each run starts and ends.
func (b *Binary) Logs() string { return b.logs().String() }

func (b *Binary) logs() *tailBuffer {
	b.logOnce.Do(func() {
		limit := b.MaxLog
		if limit <= 0 {
			limit = binaryLogBytes
		}
		b.log = newTailBuffer(limit)
	})
	return b.log
}

// Start implements Target: it serves spec on a free loopback port and returns
// once GET /healthz answers 200.
func (b *Binary) Start(ctx context.Context, spec Spec) (err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc != nil {
		return fmt.Errorf("%s: already started", b.Name())
	}
	if spec.World == nil {
		return fmt.Errorf("%s: spec has no world", b.Name())
	}
	doc, err := mcplocal.ConfigYAML(spec.World)
	if err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	b.cleanupLocked() // a previous run ended by Kill
	dir, err := os.MkdirTemp("", "mcpchaos-binary-")
	if err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	defer func() {
		if err != nil {
			b.cleanupLocked()
		}
	}()
	b.dir, b.cfgPath, b.spec = dir, filepath.Join(dir, binaryConfigFile), spec
	if err := os.WriteFile(b.cfgPath, doc, 0o600); err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	err = startFresh(func(addr string) error { return b.spawnLocked(ctx, addr) })
	if err != nil {
		return fmt.Errorf("%s: %w", b.Name(), err)
	}
	b.addr = b.proc.addr
	return nil
}

// Restart implements Target: a graceful stop (SIGTERM, then SIGKILL after the
// shutdown grace knob + 5 s), then a start on the same address with the same
// config and environment (failpoints re-read). After Kill it only starts.
func (b *Binary) Restart(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return cycle(ctx, b.Name(), b.cfgPath != "", true, b.instanceLocked())
}

// Kill implements an abrupt stop: SIGKILL, then wait until the process is
// reaped. The target keeps its address and config: Restart starts it again,
// Stop cleans up.
func (b *Binary) Kill(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.stopLocked(ctx, false); err != nil {
		return fmt.Errorf("%s: kill: %w", b.Name(), err)
	}
	return nil
}

// KillRestart implements Killer: Kill, then start again on the same address.
func (b *Binary) KillRestart(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return cycle(ctx, b.Name(), b.cfgPath != "", false, b.instanceLocked())
}

// instanceLocked is the running process as the shared lifecycle drives it.
func (b *Binary) instanceLocked() instance {
	return instance{halt: b.stopLocked, resume: func(ctx context.Context) error {
		if err := b.spawnLocked(ctx, b.addr); err != nil {
			return fmt.Errorf("start on %s: %w", b.addr, err)
		}
		return nil
	}}
}

// Stop implements Target: a graceful stop, then the temp dir is removed. It
// reports a process that had already exited on its own, or did not stop
// within its grace and had to be killed. Stop may be called more than once;
// no process or goroutine of the target outlives it.
func (b *Binary) Stop(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	err := b.stopLocked(ctx, true)
	b.cleanupLocked()
	if err != nil {
		return fmt.Errorf("%s: stop: %w", b.Name(), err)
	}
	return nil
}

func (b *Binary) cleanupLocked() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
	b.dir, b.cfgPath = "", ""
}

// spawnLocked starts one process on addr and waits until GET /healthz
// answers 200. On failure no process is left; an error wrapping
// errAddrInUse means the address was taken.
func (b *Binary) spawnLocked(ctx context.Context, addr string) error {
	url := "http://" + addr + "/healthz"
	argv := []string{b.Path, "serve", "--config", b.cfgPath, "--listen", addr}
	if b.FDLimit > 0 {
		argv = append([]string{"/bin/sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, b.FDLimit)}, argv...)
	}
	p, err := spawn(ctx, procSpec{argv: argv,
		env: b.environLocked(), addr: addr, log: b.logs(), stderr: b.Stderr}, "/healthz", healthProbe(url))
	if err != nil {
		return err
	}
	b.proc = p
	return nil
}

// stopLocked ends the running process, if any: SIGTERM and a bounded wait
// (graceful), or SIGKILL. A process that exited by itself, a graceful stop
// that failed or had to be forced, and a cancelled ctx are errors; the
// process is gone in every case.
func (b *Binary) stopLocked(ctx context.Context, graceful bool) error {
	p := b.proc
	if p == nil {
		return nil
	}
	b.proc = nil
	grace := shutdownGrace(b.spec.bounds())
	return p.stop(ctx, graceful, grace+binaryStopSlack, true)
}

// environLocked is the process's environment: this process's, without any
// knob or failpoint variable, plus every knob of the spec in milliseconds,
// the spec's failpoints, and b.Env.
func (b *Binary) environLocked() []string {
	ours := map[string]bool{failpointsEnv: true, "MCPLOCAL_ENABLE_FAILPOINTS": true}
	for _, name := range DefaultBounds().Names() {
		ours[name] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !ours[k] {
			env = append(env, kv)
		}
	}
	// A zero bound leaves the proxy's default.
	env = append(env, b.spec.Bounds.Environ()...)
	if fp := b.spec.Failpoints.String(); fp != "" { // nil-safe
		env = append(env, failpointsEnv+"="+fp)
		if !b.NoFailpointSwitch {
			env = append(env, "MCPLOCAL_ENABLE_FAILPOINTS=1") // mcplocal ignores failpoints without it
		}
	}
	for k, v := range b.spec.Env {
		env = append(env, k+"="+v)
	}
	return append(env, b.Env...)
}

// BuildMcplocal builds cmd/mcplocal into dir/mcplocal and returns its path.
// It runs `go build` in the current directory, which must be inside the
// module (a test's package directory is); flags are extra build flags, such
// as "-race".
func BuildMcplocal(ctx context.Context, dir string, flags ...string) (string, error) {
	return BuildCommand(ctx, dir, "mcplocal", flags...)
}

// BuildCommand builds cmd/NAME of this module into dir/NAME and returns its path.
func BuildCommand(ctx context.Context, dir, name string, flags ...string) (string, error) {
	path := filepath.Join(dir, name)
	args := append([]string{"build", "-o", path}, flags...)
	args = append(args, "github.com/mcpchaos/mcpchaos/cmd/"+name)
	cmd := exec.CommandContext(ctx, "go", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return path, nil
}

// ignoreErrors writes to w, if any, and never fails: a broken report writer
// must not stall the process whose output it copies.
type ignoreErrors struct{ w io.Writer }

func (e ignoreErrors) Write(p []byte) (int, error) {
	if e.w != nil {
		_, _ = e.w.Write(p)
	}
	return len(p), nil
}

// tailBuffer keeps the last limit bytes written to it. It is safe for
// concurrent use and never fails a write.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped int64
}

func newTailBuffer(limit int) *tailBuffer { return &tailBuffer{limit: limit} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.limit { // trim in batches: amortised O(1) per byte
		cut := len(t.buf) - t.limit
		t.dropped += int64(cut)
		t.buf = t.buf[:copy(t.buf, t.buf[cut:])]
	}
	return len(p), nil
}

// String is the kept tail, starting at a line boundary, with a note of how
// much was dropped before it.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, dropped := t.buf, t.dropped
	if len(b) > t.limit {
		dropped += int64(len(b) - t.limit)
		b = b[len(b)-t.limit:]
	}
	if dropped == 0 {
		return string(b)
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		dropped += int64(i + 1)
		b = b[i+1:]
	}
	return fmt.Sprintf("[... %d earlier bytes dropped]\n%s", dropped, b)
}
