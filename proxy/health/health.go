// Package health probes upstream MCP servers and tells the truth about them:
// a server that answers tools/list is only live, a server whose readiness
// probe (a tools/call that must cross to its own upstream) passes is healthy.
//
// Each server is probed by its own goroutine, on its own upstream session, at
// its interval, one probe at a time, each bounded by its timeout. Stop ends
// them all.
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/bound"
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/upstream"
)

// Status of one upstream server.
type Status string

// Statuses.
const (
	// Unknown: not probed yet.
	Unknown Status = "unknown"
	// Healthy: the readiness probe passed; the server can do its job.
	Healthy Status = "healthy"
	// Live: the liveness probe (tools/list) passed; its upstream is unverified.
	// Not a warning: an admission that nothing watches that upstream.
	Live Status = "live"
	// Degraded: failing, under the failure threshold.
	Degraded Status = "degraded"
	// Unhealthy: failed threshold times in a row.
	Unhealthy Status = "unhealthy"
	// Misconfigured: the probe names a tool the server does not expose; it
	// can never pass, and it is not a health signal either way.
	Misconfigured Status = "misconfigured"
)

// LocalOnlyLatency is the latency under which a passing readiness probe is
// noted as probably reading a local table, not crossing a network: the seed
// saw 3 ms for a lying probe and 40 ms to 1847 ms for a real round trip.
const LocalOnlyLatency = 10 * time.Millisecond

// Instance is what the proxy knows about one upstream server's health.
type Instance struct {
	Project   string        `json:"project"`
	Server    string        `json:"server"`
	Status    Status        `json:"status"`
	Probe     string        `json:"probe"` // "readiness: tools/call list_sites" or "liveness: tools/list"
	Latency   time.Duration `json:"latencyNs"`
	LastError string        `json:"lastError,omitempty"`
	Note      string        `json:"note,omitempty"`
	Failures  int           `json:"consecutiveFailures"`
	CheckedAt time.Time     `json:"checkedAt"`
	ChangedAt time.Time     `json:"changedAt"`
	// Paused: an operator paused the server's project (mcpctl pause); its
	// requests wait in the pause queue. Set by the proxy, not by probes.
	Paused bool `json:"paused,omitempty"`
}

// Target is one server to probe.
type Target struct {
	Project, Server, URL string
	Check                *config.HealthCheck // nil: liveness with defaults
	Headers              http.Header         // credentials sent with every probe (config headers)
}

// Prober probes every target until Stop.
type Prober struct {
	mu        sync.Mutex
	instances map[string]*Instance // project/server
	probes    map[string]*probing  // project/server
	ctx       context.Context
	stop      context.CancelFunc
	wg        sync.WaitGroup
	connect   time.Duration
	grace     time.Duration
	maxError  int // bytes of an instance's LastError kept (0: all)
}

// probing is one target's running probe loop.
type probing struct {
	cancel context.CancelFunc
	done   chan struct{}
	conn   *upstream.Conn
}

// Start begins probing every target at once, then at each target's interval.
// connect bounds a probe's upstream connect; grace bounds closing its
// session when the prober stops.
func Start(targets []Target, connect, grace time.Duration) *Prober {
	return StartCutting(targets, connect, grace, 0)
}

// StartCutting is Start keeping at most maxError bytes of each instance's
// LastError (MCPCTL_MAX_STORED_STRING_BYTES; bound.String's marker says how
// much was cut): an upstream's error text is the upstream's to size, and the
// prober holds it until the next probe. 0 keeps it whole.
func StartCutting(targets []Target, connect, grace time.Duration, maxError int) *Prober {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Prober{instances: map[string]*Instance{}, probes: map[string]*probing{}, ctx: ctx, stop: cancel, connect: connect, grace: grace, maxError: maxError}
	for _, t := range targets {
		p.Put(t)
	}
	return p
}

// Put starts probing t, or restarts it when a target of that project and
// server is probed already (a server an operator replaced): the old probe
// loop is stopped and its session closed first, and the instance starts
// over as unknown with its new probe.
func (p *Prober) Put(t Target) {
	p.Remove(t.Project, t.Server)
	k := key(t.Project, t.Server)
	ctx, cancel := context.WithCancel(p.ctx)
	pr := &probing{cancel: cancel, done: make(chan struct{}),
		conn: upstream.New(t.Server, t.URL, upstream.Options{ConnectTimeout: p.connect, CallTimeout: t.Check.Timeout(), CloseGrace: p.grace, Headers: t.Headers})}
	p.mu.Lock()
	p.instances[k] = &Instance{Project: t.Project, Server: t.Server, Status: Unknown, Probe: probeName(t.Check), ChangedAt: time.Now()}
	p.probes[k] = pr
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer close(pr.done)
		p.loop(ctx, t, pr.conn)
	}()
}

// Remove stops probing a server and forgets its instance. It waits for the
// server's probe loop to end and closes its session.
func (p *Prober) Remove(project, server string) {
	k := key(project, server)
	p.mu.Lock()
	pr := p.probes[k]
	delete(p.probes, k)
	delete(p.instances, k)
	p.mu.Unlock()
	if pr == nil {
		return
	}
	pr.cancel()
	<-pr.done
	_ = pr.conn.Close()
}

func key(project, server string) string { return project + "/" + server }

func probeName(h *config.HealthCheck) string {
	if h != nil && h.Tool != "" {
		return "readiness: tools/call " + h.Tool
	}
	return "liveness: tools/list"
}

// loop probes t until ctx ends; probes of one server never overlap.
func (p *Prober) loop(ctx context.Context, t Target, conn *upstream.Conn) {
	defer p.wg.Done()
	tick := time.NewTicker(t.Check.Interval())
	defer tick.Stop()
	for {
		p.probe(ctx, t, conn)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (p *Prober) probe(parent context.Context, t Target, conn *upstream.Conn) {
	ctx, cancel := context.WithTimeout(parent, t.Check.Timeout())
	defer cancel()
	start := time.Now()
	err := run(ctx, t, conn)
	if parent.Err() != nil {
		return // the prober is stopping: not a probe result
	}
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("no answer within %v (%v)", t.Check.Timeout(), err)
	}
	p.record(t, time.Since(start), err)
}

// errMisconfigured marks a probe that can never pass.
var errMisconfigured = errors.New("configuration error")

func run(ctx context.Context, t Target, conn *upstream.Conn) error {
	_, err := Once(ctx, t, conn)
	return err
}

// ProbeName names t's probe: "liveness: tools/list" or
// "readiness: tools/call TOOL".
func ProbeName(t Target) string { return probeName(t.Check) }

// Once runs t's probe once on conn, as the prober does: tools/list, then,
// for a readiness probe, tools/call of its tool. It returns how many tools
// the server listed (-1 when tools/list failed) and the probe's error; nil
// is a passing probe.
func Once(ctx context.Context, t Target, conn *upstream.Conn) (int, error) {
	tools, err := conn.ListTools(ctx)
	if err != nil {
		return -1, err
	}
	if t.Check == nil || t.Check.Tool == "" {
		return len(tools), nil
	}
	return len(tools), ready(ctx, t, conn, tools)
}

// ready is a readiness probe's tools/call of its tool, on a server that
// listed tools.
func ready(ctx context.Context, t Target, conn *upstream.Conn, tools []*mcp.Tool) error {
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	if !slices.Contains(names, t.Check.Tool) {
		sort.Strings(names)
		return fmt.Errorf("%w: healthCheck.tool %q is not a tool of server %s (it has: %s)", errMisconfigured, t.Check.Tool, t.Server, strings.Join(names, ", "))
	}
	args, err := json.Marshal(t.Check.Arguments)
	if err != nil {
		return fmt.Errorf("%w: healthCheck.arguments: %v", errMisconfigured, err)
	}
	res, err := conn.CallTool(ctx, t.Check.Tool, args, nil)
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tools/call %s answered isError: %s", t.Check.Tool, firstText(res.Content))
	}
	return nil
}

func (p *Prober) record(t Target, latency time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.instances[key(t.Project, t.Server)]
	if in == nil {
		return // removed while probing
	}
	prev := in.Status
	in.CheckedAt, in.Latency, in.Note = time.Now(), latency, ""
	switch {
	case errors.Is(err, errMisconfigured):
		in.Status, in.LastError, in.Failures = Misconfigured, p.cut(err.Error()), 0
	case err != nil:
		in.Failures++
		in.LastError = p.cut(lastError(err))
		in.Status = Degraded
		if in.Failures >= t.Check.Threshold() {
			in.Status = Unhealthy
		}
	default:
		in.Failures, in.LastError = 0, ""
		in.Status = Live
		if t.Check != nil && t.Check.Tool != "" {
			in.Status = Healthy
			if latency < LocalOnlyLatency {
				in.Note = fmt.Sprintf("answered in %v: a probe this fast is likely reading a local table, not reaching the server's upstream; pick a tool that round-trips", latency.Round(100*time.Microsecond))
			}
		}
	}
	if in.Status != prev {
		in.ChangedAt = in.CheckedAt
	}
}

// Instances returns every server's state, sorted by project and server.
func (p *Prober) Instances() []Instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Instance, 0, len(p.instances))
	for _, in := range p.instances {
		out = append(out, *in)
	}
	sort.Slice(out, func(i, j int) bool { return key(out[i].Project, out[i].Server) < key(out[j].Project, out[j].Server) })
	return out
}

// NotReady names the servers that make the proxy not ready (unhealthy or
// misconfigured ones) and their status, never their lastError: /readyz is
// open to whoever reaches the proxy, and a lastError may quote an internal
// service's body (the admin API shows it).
func (p *Prober) NotReady() []string {
	var out []string
	for _, in := range p.Instances() {
		if in.Status == Unhealthy || in.Status == Misconfigured {
			out = append(out, fmt.Sprintf("%s/%s: %s", in.Project, in.Server, in.Status))
		}
	}
	return out
}

// Stop ends every probe and waits for them. Stop may be called more than once.
func (p *Prober) Stop() {
	p.stop()
	p.wg.Wait()
	p.mu.Lock()
	probes := p.probes
	p.probes = map[string]*probing{}
	p.mu.Unlock()
	for _, pr := range probes {
		_ = pr.conn.Close()
	}
}

func firstText(content []mcp.Content) string {
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

// lastError is what an instance shows of a failed probe. An answer that was
// not MCP's shape (an L7 proxy's plain-text 403, a login page) is shown as
// just that: its status, type and first bytes are the whole diagnosis, and
// the transport layers it crossed would bury them.
// cut keeps at most maxError bytes of an error's text.
func (p *Prober) cut(s string) string {
	if p.maxError <= 0 {
		return s
	}
	return bound.String(s, p.maxError)
}

func lastError(err error) string {
	var se *upstream.ShapeError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}
