package harness

import (
	"context"
	"fmt"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/failpoint"
)

// Fault is one named, parameterised misbehaviour injected into an Env.
// Faults are values: their exported fields are their parameters.
type Fault interface {
	// Name is the catalogue name, e.g. "latency".
	Name() string
	// Params renders the parameters for tables, e.g. "link=docmost latency=100ms".
	Params() string
	// Inject applies the fault to env; it stays until the env closes.
	Inject(ctx context.Context, env *Env) error
}

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

// ToolSlow makes one upstream tool answer after Delay.
type ToolSlow struct {
	Tool  string        `json:"tool"`
	Delay time.Duration `json:"delay"`
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

// PreStart is implemented by faults that must be in place before the proxy
// starts (failpoints reach a proxy in another process through its environment).
type PreStart interface {
	Fault
	ArmBefore(*failpoint.Set)
}

// Midway is implemented by faults that strike during an operation rather
// than before it; the operation calls Env.Strike at its chosen moment.
type Midway interface {
	Fault
	Midway()
}

// Compile-time checks that every fault is a Fault.
var (
	_ Fault    = None{}
	_ Fault    = Latency{}
	_ Fault    = Blackhole{}
	_ Fault    = LinkDown{}
	_ Fault    = ToolHang{}
	_ Fault    = ToolError{}
	_ Fault    = HandlerPanic{}
	_ Midway   = ProxyRestart{}
	_ Midway   = ProxyKill{}
	_ Midway   = UpstreamRestart{}
	_ PreStart = HandlerPanic{}
	_ PreStart = HandlerHang{}
)

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
	e.Failpoints.Arm(failpoint.ToolCall, f.Tool, failpoint.Hang)
	return nil
}

// ArmBefore arms the failpoint before the proxy starts.
func (f HandlerHang) ArmBefore(s *failpoint.Set) { s.Arm(failpoint.ToolCall, f.Tool, failpoint.Hang) }

// ArmBefore arms the failpoint before the proxy starts.
func (f HandlerPanic) ArmBefore(s *failpoint.Set) { s.Arm(failpoint.ToolCall, f.Tool, failpoint.Panic) }

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
func (f ToolSlow) Params() string  { return fmt.Sprintf("tool=%s delay=%v", f.Tool, f.Delay) }
func (ToolHang) Name() string      { return "tool-hang" }
func (f ToolHang) Params() string {
	if f.Server != "" {
		return "server=" + f.Server + " tool=" + f.Tool
	}
	return "tool=" + f.Tool
}
func (ToolError) Name() string        { return "tool-error" }
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
	e.Docmost.Set(f.Tool, upstream.Behavior{Kind: upstream.Slow, Delay: f.Delay})
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
func (f ToolError) Inject(_ context.Context, e *Env) error {
	e.Docmost.Set(f.Tool, upstream.Behavior{Kind: upstream.ErrorResult})
	return nil
}
func (f HandlerPanic) Inject(_ context.Context, e *Env) error {
	e.Failpoints.Arm(failpoint.ToolCall, f.Tool, failpoint.Panic)
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
