package harness

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
)

// Target is where the proxy under test runs. Implementations: InProcess
// (default, nothing to install), Binary, Container, Foreign and Live.
type Target interface {
	// Name identifies the target in reports ("inprocess", "binary:PATH", ...).
	Name() string
	// Start serves spec on a free loopback port.
	Start(ctx context.Context, spec Spec) error
	// URL is the proxy's base URL, http://HOST:PORT.
	URL() string
	// Restart stops the proxy and starts it again on the same address, losing
	// every in-memory session (the audit store persists).
	Restart(ctx context.Context) error
	// Stop stops the proxy. Stop may be called more than once.
	Stop(ctx context.Context) error
}

// Spec is what a target runs: the world its proxy serves, the bounds it
// runs under, the failpoints armed in it.
type Spec struct {
	World *World
	// Bounds by name; none: the proxy's defaults.
	Bounds     Bounds
	Failpoints *Failpoints
	// Env are environment variables the proxy reads (the secrets the
	// world names: an LLM's key, a server header's value).
	Env map[string]string
}

// bounds are the spec's bounds, the proxy's defaults when it gives none.
func (s Spec) bounds() Bounds {
	if s.Bounds.IsZero() {
		return DefaultBounds()
	}
	return s.Bounds
}

// InProcess runs the proxy inside the test process. Its log goes to Logger
// (if set) and to a bounded buffer, Logs, as a binary's stderr does; its
// audit store can be stalled (StallAudit), which a process cannot be made to.
type InProcess struct {
	Logger *slog.Logger

	mu      sync.Mutex
	p       *mcplocal.Proxy
	spec    Spec
	fps     *mcplocal.FailpointSet
	addr    string
	logOnce sync.Once
	log     *tailBuffer
	stalled atomic.Bool
}

var _ Target = (*InProcess)(nil)

// Name implements Target.
func (t *InProcess) Name() string { return "inprocess" }

// Start implements Target.
func (t *InProcess) Start(ctx context.Context, spec Spec) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.spec = spec
	// The proxy's failpoints follow the spec's, armed before the start or
	// while it runs (a fault armed mid-world), and last across restarts.
	t.fps = mcplocal.Follow(spec.Failpoints)
	return t.startLocked(ctx, "127.0.0.1:0")
}

func (t *InProcess) startLocked(ctx context.Context, addr string) error {
	t.stalled.Store(false)
	p, err := mcplocal.Start(ctx, mcplocal.Run{
		World: t.spec.World, Bounds: t.spec.bounds(), Env: t.spec.Env,
		Logger: t.logger(), Failpoints: t.fps, Stalled: t.stalled.Load,
	}, addr)
	if err != nil {
		return err
	}
	t.p, t.addr = p, p.Addr()
	return nil
}

// URL implements Target.
func (t *InProcess) URL() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return "http://" + t.addr
}

// Proxy is the running proxy, for white-box checks (session table size).
func (t *InProcess) Proxy() *mcplocal.Proxy {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.p
}

// Restart implements Target.
func (t *InProcess) Restart(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p == nil {
		return fmt.Errorf("inprocess target: restart before start")
	}
	if err := t.p.Close(ctx); err != nil {
		return fmt.Errorf("inprocess target: stop: %w", err)
	}
	t.p = nil
	return t.startLocked(ctx, t.addr)
}

// Stop implements Target.
func (t *InProcess) Stop(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.p == nil {
		return nil
	}
	err := t.p.Close(ctx)
	t.p = nil
	return err
}
