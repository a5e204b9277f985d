package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// Fault is one named, parameterised misbehaviour injected into an Env.
// Faults are values: their exported fields are their parameters. Each one
// says when it strikes and what it requires, so that neither the catalogue
// nor the Env switches over fault types; the Registry builds any of them from
// its name and parameters (`NAME[:k=v,k=v]`, see ParseFault).
type Fault interface {
	// Name is the catalogue name, e.g. "latency".
	Name() string
	// Params renders the parameters for tables, e.g. "link=docmost latency=100ms".
	Params() string
	// Strikes says when the fault is injected (see Strike).
	Strikes() Strike
	// Requires lists what the fault needs from the target (a capability,
	// see AllCapabilities) or from the scenario's world (the Need* values);
	// a scenario whose fault requires what it lacks is not applicable.
	Requires() []string
	// Inject applies the fault to env; it stays until the env closes.
	Inject(ctx context.Context, env *Env) error
}

// Strike is when a fault strikes.
type Strike string

const (
	// StrikeNever: nothing is injected (none, no-llm-configured).
	StrikeNever Strike = "never"
	// StrikeBeforeStart: armed before the proxy starts (a failpoint reaches a
	// proxy in another process through its environment).
	StrikeBeforeStart Strike = "before start"
	// StrikeBeforeCall: injected once the world is up, before the operation.
	StrikeBeforeCall Strike = "before the call"
	// StrikeMidway: injected when the operation calls Env.Strike, at its
	// chosen moment. A Midway fault the operation never strikes fails the
	// scenario: it proved nothing.
	StrikeMidway Strike = "midway"
)

// What a fault may require of the scenario's world, beside a target's
// capabilities (see Unmet).
const (
	// NeedToxiproxy: a toxiproxy link between the proxy and a fake, which
	// every target but a live one has.
	NeedToxiproxy = "toxiproxy"
	// NeedUpstreamFake: the harness's docmost fake behind the proxy.
	NeedUpstreamFake = "upstream fake"
	// NeedLLM: a fake LLM as the proxy's primary provider (EnvOptions.LLM).
	NeedLLM = "LLM fake"
	// NeedEverything: the everything fake (EnvOptions.Everything).
	NeedEverything = "everything fake"
	// NeedUnifi: the unifi-like server and its controller (EnvOptions.Unifi).
	NeedUnifi = "unifi fake"
)

// None is the absence of a fault: the baseline every promise must hold on.
type None struct{}

// Network faults act on one toxiproxy link: LinkDocmost (proxy to upstream,
// the default) or LinkLLM (proxy to the primary LLM).
const (
	LinkDocmost    = "docmost"
	LinkLLM        = "llm"
	LinkController = "controller" // the unifi-like server's controller
	LinkEverything = "everything" // the everything fake (EnvOptions.Everything)
)

// Latency delays every byte coming back over the link (toxiproxy latency).
type Latency struct {
	Link string `json:"link"`
	Ms   int    `json:"latencyMs"`
}

// Bandwidth caps what comes back over the link (toxiproxy bandwidth); 0 stalls it.
type Bandwidth struct {
	Link string `json:"link"`
	KBps int    `json:"rateKBps"`
}

// Blackhole accepts connections over the link and never answers (toxiproxy
// timeout with timeout=0: data is dropped, the connection never closes).
type Blackhole struct {
	Link string `json:"link"`
}

// ResetPeer resets connections over the link after TimeoutMs (toxiproxy reset_peer).
type ResetPeer struct {
	Link      string `json:"link"`
	TimeoutMs int    `json:"timeoutMs"`
}

// Slicer cuts what comes back into small pieces with a delay between them
// (toxiproxy slicer): answers arrive, slowly and fragmented.
type Slicer struct {
	Link     string `json:"link"`
	AvgBytes int    `json:"averageSize"`
	DelayUs  int    `json:"delayUs"`
}

// LimitData closes connections over the link after Bytes have come back
// (toxiproxy limit_data): answers are cut off mid-body.
type LimitData struct {
	Link  string `json:"link"`
	Bytes int    `json:"bytes"`
}

// LinkDown refuses connections over the link (the toxiproxy proxy is stopped).
type LinkDown struct {
	Link string `json:"link"`
}

// ToolSlow makes one upstream tool answer after Delay; with PastBudget, after
// at least twice the request budget in force on the target (see DelayIn), so
// the tool is slower than the budget whatever the target declares.
type ToolSlow struct {
	Tool       string        `json:"tool"`
	Delay      time.Duration `json:"delay"`
	PastBudget bool          `json:"pastBudget,omitempty"`
}

// ToolHang makes one upstream tool never answer (the fake blocks until the
// caller cancels).
type ToolHang struct {
	Tool string `json:"tool"`
	// Server is the fake the tool belongs to: "" is docmost, "everything"
	// the everything fake.
	Server string `json:"server,omitempty"`
}

// ToolError makes one upstream tool answer with isError: true.
type ToolError struct {
	Tool string `json:"tool"`
}

// HandshakeStall makes the docmost fake answer initialize, handing out a
// session id, and hold every other request (notifications/initialized, calls,
// the DELETE) until the caller goes away.
type HandshakeStall struct{}

// HandlerPanic arms a failpoint that panics inside the proxy's tools/call
// handler for one (prefixed) tool.
type HandlerPanic struct {
	Tool string `json:"tool"`
}

// ProxyRestart stops the proxy under test and starts it again on the same
// address, mid-operation: every in-memory session is lost.
type ProxyRestart struct{}

// HandlerHang arms a failpoint that blocks inside the proxy's tools/call
// handler for one (prefixed) tool until the request's context ends: only the
// outer request deadline can answer it.
type HandlerHang struct {
	Tool string `json:"tool"`
}

// UpstreamRestart stops the docmost upstream and starts a new one on the same
// address mid-operation: it forgets every MCP session the proxy held with it.
type UpstreamRestart struct{}

// ProxyKill SIGKILLs the proxy under test and starts it again on the same
// address, mid-operation. Only targets that are processes (Killer) can take it.
type ProxyKill struct{}

// Midway is implemented by faults that strike during an operation rather
// than before it (their Strikes is StrikeMidway); the operation calls
// Env.Strike at its chosen moment. Kept for callers that inject faults
// themselves (the soak).
type Midway interface {
	Fault
	Midway()
}

// Compile-time checks that every fault is a Fault.
var (
	_ Fault  = None{}
	_ Fault  = Latency{}
	_ Fault  = Bandwidth{}
	_ Fault  = Blackhole{}
	_ Fault  = ResetPeer{}
	_ Fault  = Slicer{}
	_ Fault  = LimitData{}
	_ Fault  = LinkDown{}
	_ Fault  = ToolSlow{}
	_ Fault  = ToolHang{}
	_ Fault  = ToolError{}
	_ Fault  = HandshakeStall{}
	_ Fault  = HandlerPanic{}
	_ Fault  = HandlerHang{}
	_ Midway = ProxyRestart{}
	_ Midway = ProxyKill{}
	_ Midway = UpstreamRestart{}
)

// When each fault strikes.
func (None) Strikes() Strike            { return StrikeNever }
func (NoLLM) Strikes() Strike           { return StrikeNever }
func (Latency) Strikes() Strike         { return StrikeBeforeCall }
func (Bandwidth) Strikes() Strike       { return StrikeBeforeCall }
func (Blackhole) Strikes() Strike       { return StrikeBeforeCall }
func (ResetPeer) Strikes() Strike       { return StrikeBeforeCall }
func (Slicer) Strikes() Strike          { return StrikeBeforeCall }
func (LimitData) Strikes() Strike       { return StrikeBeforeCall }
func (LinkDown) Strikes() Strike        { return StrikeBeforeCall }
func (ToolSlow) Strikes() Strike        { return StrikeBeforeCall }
func (ToolHang) Strikes() Strike        { return StrikeBeforeCall }
func (ToolError) Strikes() Strike       { return StrikeBeforeCall }
func (HandshakeStall) Strikes() Strike  { return StrikeBeforeCall }
func (LLMFault) Strikes() Strike        { return StrikeBeforeCall }
func (LLMRandom) Strikes() Strike       { return StrikeBeforeCall }
func (IngressHairpin) Strikes() Strike  { return StrikeBeforeCall }
func (HandlerPanic) Strikes() Strike    { return StrikeBeforeStart }
func (HandlerHang) Strikes() Strike     { return StrikeBeforeStart }
func (ProxyRestart) Strikes() Strike    { return StrikeMidway }
func (ProxyKill) Strikes() Strike       { return StrikeMidway }
func (UpstreamRestart) Strikes() Strike { return StrikeMidway }

// What each fault requires. A restart loses the proxy's in-memory sessions:
// only a proxy that adopts them (and whose audit API the checks read) can be
// judged across one.
func (None) Requires() []string             { return nil }
func (NoLLM) Requires() []string            { return nil }
func (f Latency) Requires() []string        { return linkNeeds(f.Link) }
func (f Bandwidth) Requires() []string      { return linkNeeds(f.Link) }
func (f Blackhole) Requires() []string      { return linkNeeds(f.Link) }
func (f ResetPeer) Requires() []string      { return linkNeeds(f.Link) }
func (f Slicer) Requires() []string         { return linkNeeds(f.Link) }
func (f LimitData) Requires() []string      { return linkNeeds(f.Link) }
func (f LinkDown) Requires() []string       { return linkNeeds(f.Link) }
func (f IngressHairpin) Requires() []string { return append(linkNeeds(f.Link), CapAuditAPI) }
func (ToolSlow) Requires() []string         { return []string{NeedUpstreamFake} }
func (ToolError) Requires() []string        { return []string{NeedUpstreamFake} }
func (HandshakeStall) Requires() []string   { return []string{NeedUpstreamFake} }
func (UpstreamRestart) Requires() []string  { return []string{NeedUpstreamFake} }
func (LLMFault) Requires() []string         { return []string{NeedLLM} }
func (LLMRandom) Requires() []string        { return []string{NeedLLM} }
func (HandlerPanic) Requires() []string     { return []string{CapFailpoints} }
func (HandlerHang) Requires() []string      { return []string{CapFailpoints} }
func (ProxyRestart) Requires() []string     { return nil } // any target restarts; what a scenario checks after it is its own Needs
func (ProxyKill) Requires() []string        { return []string{CapKill} }
func (f ToolHang) Requires() []string {
	if f.Server == LinkEverything {
		return []string{NeedUpstreamFake, NeedEverything}
	}
	return []string{NeedUpstreamFake}
}

// linkNeeds is what a fault on the named toxiproxy link requires.
func linkNeeds(name string) []string {
	switch name {
	case LinkLLM:
		return []string{NeedToxiproxy, NeedLLM}
	case LinkEverything:
		return []string{NeedToxiproxy, NeedEverything}
	case LinkController:
		return []string{NeedToxiproxy, NeedUnifi}
	}
	return []string{NeedToxiproxy}
}

func (UpstreamRestart) Name() string   { return "upstream-restart" }
func (UpstreamRestart) Params() string { return "server=docmost, same address" }
func (UpstreamRestart) Midway()        {}
func (UpstreamRestart) Inject(_ context.Context, e *Env) error {
	addr := e.Docmost.Addr()
	if err := e.Docmost.Close(); err != nil {
		return err
	}
	s, err := upstream.NewDocmost(upstream.Options{Addr: addr})
	if err != nil {
		return fmt.Errorf("restarting docmost on %s: %w", addr, err)
	}
	e.Docmost = s
	return nil
}

func (ProxyKill) Name() string   { return "proxy-kill" }
func (ProxyKill) Params() string { return "SIGKILL, start on the same port" }
func (ProxyKill) Midway()        {}
func (ProxyKill) Inject(ctx context.Context, e *Env) error {
	k, ok := e.Target.(Killer)
	if !ok {
		return fmt.Errorf("target %s cannot be killed", e.Target.Name())
	}
	return k.KillRestart(ctx)
}

func (HandlerHang) Name() string     { return "handler-hang" }
func (f HandlerHang) Params() string { return "tool=" + f.Tool }
func (f HandlerHang) Inject(_ context.Context, e *Env) error {
	e.Failpoints.HangToolCall(f.Tool)
	return nil
}

func (ProxyRestart) Name() string   { return "proxy-restart" }
func (ProxyRestart) Params() string { return "graceful stop, start on the same port" }
func (ProxyRestart) Midway()        {}
func (ProxyRestart) Inject(ctx context.Context, e *Env) error {
	return e.Target.Restart(ctx)
}

func (None) Name() string                       { return "none" }
func (None) Params() string                     { return "" }
func (None) Inject(context.Context, *Env) error { return nil }
func (Latency) Name() string                    { return "latency" }
func (f Latency) Params() string                { return fmt.Sprintf("link=%s latency=%dms", link(f.Link), f.Ms) }
func (Bandwidth) Name() string                  { return "bandwidth" }
func (f Bandwidth) Params() string              { return fmt.Sprintf("link=%s rate=%dKB/s", link(f.Link), f.KBps) }
func (Blackhole) Name() string                  { return "blackhole" }
func (f Blackhole) Params() string              { return "link=" + link(f.Link) }
func (ResetPeer) Name() string                  { return "reset-peer" }
func (f ResetPeer) Params() string {
	return fmt.Sprintf("link=%s after=%dms", link(f.Link), f.TimeoutMs)
}
func (Slicer) Name() string { return "slicer" }
func (f Slicer) Params() string {
	return fmt.Sprintf("link=%s size=%dB delay=%dµs", link(f.Link), f.AvgBytes, f.DelayUs)
}
func (LimitData) Name() string     { return "limit-data" }
func (f LimitData) Params() string { return fmt.Sprintf("link=%s bytes=%d", link(f.Link), f.Bytes) }
func (LinkDown) Name() string      { return "down" }
func (f LinkDown) Params() string  { return "link=" + link(f.Link) }
func (ToolSlow) Name() string      { return "tool-slow" }
func (f ToolSlow) Params() string {
	if f.PastBudget {
		return fmt.Sprintf("tool=%s delay=twice the request budget, at least %v", f.Tool, f.Delay)
	}
	return fmt.Sprintf("tool=%s delay=%v", f.Tool, f.Delay)
}
func (ToolHang) Name() string { return "tool-hang" }
func (f ToolHang) Params() string {
	if f.Server != "" {
		return "server=" + f.Server + " tool=" + f.Tool
	}
	return "tool=" + f.Tool
}
func (ToolError) Name() string        { return "tool-error" }
func (HandshakeStall) Name() string   { return "handshake-stall" }
func (HandshakeStall) Params() string { return "" }
func (f ToolError) Params() string    { return "tool=" + f.Tool }
func (HandlerPanic) Name() string     { return "handler-panic" }
func (f HandlerPanic) Params() string { return "tool=" + f.Tool }
func (f Latency) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "latency", "downstream", map[string]any{"latency": f.Ms})
}
func (f Bandwidth) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "bandwidth", "downstream", map[string]any{"rate": f.KBps})
}
func (f Blackhole) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "timeout", "upstream", map[string]any{"timeout": 0})
}
func (f ResetPeer) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "reset_peer", "downstream", map[string]any{"timeout": f.TimeoutMs})
}
func (f Slicer) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "slicer", "downstream", map[string]any{"average_size": f.AvgBytes, "size_variation": f.AvgBytes / 2, "delay": f.DelayUs})
}
func (f LimitData) Inject(_ context.Context, e *Env) error {
	return toxic(e, f.Link, "limit_data", "downstream", map[string]any{"bytes": f.Bytes})
}
func (f LinkDown) Inject(_ context.Context, e *Env) error {
	l, err := e.link(f.Link)
	if err != nil {
		return err
	}
	l.Down()
	return nil
}
func (f ToolSlow) Inject(_ context.Context, e *Env) error {
	e.Docmost.Set(f.Tool, upstream.Behavior{Kind: upstream.Slow, Delay: f.DelayIn(BudgetsOf(e.Target, e.Bounds()))})
	return nil
}

func link(name string) string {
	if name == "" {
		return LinkDocmost
	}
	return name
}

// toxic adds one toxic of typ to the named link.
func toxic(e *Env, name, typ, stream string, attrs map[string]any) error {
	l, err := e.link(name)
	if err != nil {
		return err
	}
	return l.Toxic(typ, typ, stream, attrs)
}
func (f ToolHang) Inject(_ context.Context, e *Env) error {
	fake := e.Docmost
	if f.Server == LinkEverything {
		if e.Everything == nil {
			return fmt.Errorf("tool-hang: this env has no everything fake")
		}
		fake = e.Everything
	}
	fake.Set(f.Tool, upstream.Behavior{Kind: upstream.Hang})
	return nil
}
func (HandshakeStall) Inject(_ context.Context, e *Env) error {
	e.Docmost.StallHandshakes(true)
	return nil
}
func (f ToolError) Inject(_ context.Context, e *Env) error {
	e.Docmost.Set(f.Tool, upstream.Behavior{Kind: upstream.ErrorResult})
	return nil
}
func (f HandlerPanic) Inject(_ context.Context, e *Env) error {
	e.Failpoints.PanicToolCall(f.Tool)
	return nil
}

// LLMFault switches the primary fake LLM to one behaviour of the fakes/llm
// catalogue for every model (hang, 404, 500, 529, slow, stall, empty, ...).
type LLMFault struct {
	Step fakellm.Step `json:"step"`
}

// NoLLM is the absence of any LLM in the proxy's config: a choice, not a
// fault. Scenarios with it check that nothing claims a degradation.
type NoLLM struct{}

var (
	_ Fault = LLMFault{}
	_ Fault = LLMRandom{}
	_ Fault = NoLLM{}
)

func (f LLMFault) Name() string   { return "llm-" + string(f.Step.Kind) }
func (f LLMFault) Params() string { return "primary=" + f.Step.String() }
func (f LLMFault) Inject(_ context.Context, e *Env) error {
	if e.LLM == nil {
		return fmt.Errorf("fault %s needs an env with an LLM", f.Name())
	}
	return e.LLM.Set(fakellm.AnyModel, f.Step)
}
func (NoLLM) Name() string                       { return "no-llm-configured" }
func (NoLLM) Params() string                     { return "" }
func (NoLLM) Inject(context.Context, *Env) error { return nil }

// LLMRandom makes the primary fake LLM draw each answer among Choices, with
// probability proportional to their weights, from a generator seeded with the
// env's Seed (derived from the run's --seed and the scenario's name): the
// same seed draws the same answers, so a failing run replays exactly.
type LLMRandom struct {
	Choices []fakellm.Choice `json:"choices"`
}

func (LLMRandom) Name() string { return "llm-random" }
func (f LLMRandom) Params() string {
	parts := make([]string, len(f.Choices))
	for i, c := range f.Choices {
		parts[i] = fmt.Sprintf("%s×%g", c.Step, c.Weight)
	}
	return "primary draws " + strings.Join(parts, " ")
}
func (f LLMRandom) Inject(_ context.Context, e *Env) error {
	if e.LLM == nil {
		return fmt.Errorf("fault %s needs an env with an LLM", f.Name())
	}
	return e.LLM.SetRandom(fakellm.AnyModel, fakellm.Random{Seed: e.Seed, Choices: f.Choices})
}
