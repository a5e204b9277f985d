package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// Readier is a target that can say, between two scenarios of a warm run,
// whether the proxy it started still runs and is ready, by its own
// readiness probe (mcplocal's /readyz, a foreign spec's `ready:`). Only
// such a target's world is kept warm.
type Readier interface {
	Ready(ctx context.Context) error
}

var (
	_ Readier = (*InProcess)(nil)
	_ Readier = (*Binary)(nil)
	_ Readier = (*Foreign)(nil)
	_ Readier = (*Container)(nil)
	_ Readier = (*Cluster)(nil)
)

// Ready implements Readier: GET /readyz answers 200 (no paused project,
// the audit store writes).
func (t *InProcess) Ready(ctx context.Context) error {
	if t.Proxy() == nil {
		return errors.New("inprocess target: not running")
	}
	return readyz(ctx, t.URL())
}

// Ready implements Readier: the process runs and GET /readyz answers 200.
func (b *Binary) Ready(ctx context.Context) error {
	b.mu.Lock()
	p, url := b.proc, "http://"+b.addr
	b.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s: not running", b.Name())
	}
	if err := p.alive("/readyz")(ctx); err != nil {
		return err
	}
	return readyz(ctx, url)
}

// Ready implements Readier: the command or the container still runs and
// the spec's own readiness probe answers.
func (f *Foreign) Ready(ctx context.Context) error {
	f.mu.Lock()
	p, run := f.proc, f.run
	what, probe := f.readyProbe()
	f.mu.Unlock()
	switch {
	case run != nil:
		if err := run.up(ctx); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	case p == nil:
		return fmt.Errorf("%s: not running", f.Name())
	default:
		if err := p.alive(what)(ctx); err != nil {
			return err
		}
	}
	if !probe(ctx, warmProbeClient()) {
		return fmt.Errorf("%s: %s did not answer", f.Name(), what)
	}
	return nil
}

// Ready implements Readier: the container still runs and GET /readyz
// answers 200.
func (c *Container) Ready(ctx context.Context) error {
	c.mu.Lock()
	r := c.run
	c.mu.Unlock()
	if r == nil {
		return fmt.Errorf("%s: not running", c.Name())
	}
	if err := r.up(ctx); err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	return readyz(ctx, "http://"+r.addr)
}

// Ready implements Readier: HAProxy still runs, every replica is ready by
// its own probe, and (mcplocal's replicas) GET /readyz through the balancer
// answers 200.
func (c *Cluster) Ready(ctx context.Context) error {
	c.mu.Lock()
	lb, replicas, url := c.lb, slices.Clone(c.replicas), "http://"+c.lbAddr
	c.mu.Unlock()
	if lb == nil {
		return fmt.Errorf("%s: not running", c.Name())
	}
	if err := lb.alive("haproxy")(ctx); err != nil {
		return fmt.Errorf("%s: %w", c.Name(), err)
	}
	for i, r := range replicas {
		if err := r.Ready(ctx); err != nil {
			return fmt.Errorf("%s: replica %s: %w", c.Name(), ReplicaName(i), err)
		}
	}
	if c.foreign != nil {
		return nil
	}
	return readyz(ctx, url)
}

func warmProbeClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: warmProbe}
}

func readyz(ctx context.Context, base string) error {
	if !healthz(ctx, warmProbeClient(), base+"/readyz") {
		return fmt.Errorf("GET %s/readyz did not answer 200", base)
	}
	return nil
}

// Reuse readies a world that served one scenario for the next, with the
// proxy process left running: whatever the last scenario's fault left is
// undone (the hairpin it started stopped, every toxic removed, a downed link
// up again on its address), the fakes are back to their defaults once the
// calls they were serving have ended, and the fault bookkeeping is cleared
// for a world with seed. The world is then judged ready: the target's own
// probe answers and, where the target can tell, no session is left open. An
// error means the world cannot be reused: close it and build a cold one.
func (e *Env) Reuse(ctx context.Context, seed uint64) error {
	var errs []error
	for _, c := range e.closers {
		errs = append(errs, c())
	}
	e.closers = nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("undo the last fault: %w", err)
	}
	for _, l := range e.links() {
		l.Heal()
		if err := l.Up(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
			return fmt.Errorf("link %s up again: %w", l.p.Name, err)
		}
	}
	if err := e.quiesce(ctx); err != nil {
		return err
	}
	for _, u := range []*upstream.Server{e.Docmost, e.Unifi, e.Everything} {
		if u != nil {
			u.Reset()
			u.StallHandshakes(false)
		}
	}
	for _, f := range []*fakellm.Server{e.LLM, e.Fallback} {
		if f != nil {
			f.Reset()
		}
	}
	e.pending, e.armed, e.struck, e.Seed = nil, nil, false, seed
	r, ok := e.Target.(Readier)
	if !ok {
		return fmt.Errorf("target %s has no readiness probe between scenarios", e.Target.Name())
	}
	if err := r.Ready(ctx); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	if n, counted := e.LiveSessions(); counted && n != 0 {
		return fmt.Errorf("%d sessions left open by the last scenario", n)
	}
	return nil
}

// links are the world's toxiproxy links.
func (e *Env) links() []*Link {
	var out []*Link
	for _, l := range []*Link{e.DocmostLink, e.LLMLink, e.ControllerLink, e.EverythingLink} {
		if l != nil {
			out = append(out, l)
		}
	}
	return out
}

// quiesce waits, up to warmQuiet, until the fakes serve no call: a hung or
// slow call of the last scenario ends when the proxy gives it up.
func (e *Env) quiesce(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, warmQuiet)
	defer cancel()
	for {
		busy := 0
		for _, u := range []*upstream.Server{e.Docmost, e.Unifi, e.Everything} {
			if u != nil {
				busy += u.InFlight()
			}
		}
		if busy == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the fakes still serve %d calls of the last scenario after %v", busy, warmQuiet)
		case <-time.After(readyPoll):
		}
	}
}
