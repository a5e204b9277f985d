package harness

import (
	"context"
	"fmt"

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

// Latency delays every byte the upstream sends back (toxiproxy latency).
type Latency struct {
	Ms int `json:"latencyMs"`
}

// Blackhole accepts the upstream connection and never answers (toxiproxy
// timeout with timeout=0: data is dropped, the connection never closes).
type Blackhole struct{}

// LinkDown refuses connections to the upstream (the toxiproxy link is stopped).
type LinkDown struct{}

// ToolHang makes one upstream tool never answer (the fake blocks until the
// caller cancels).
type ToolHang struct {
	Tool string `json:"tool"`
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
	_ PreStart = HandlerPanic{}
)

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
func (f Latency) Params() string                { return fmt.Sprintf("link=docmost latency=%dms", f.Ms) }
func (Blackhole) Name() string                  { return "blackhole" }
func (Blackhole) Params() string                { return "link=docmost" }
func (LinkDown) Name() string                   { return "down" }
func (LinkDown) Params() string                 { return "link=docmost" }
func (ToolHang) Name() string                   { return "tool-hang" }
func (f ToolHang) Params() string               { return "tool=" + f.Tool }
func (ToolError) Name() string                  { return "tool-error" }
func (f ToolError) Params() string              { return "tool=" + f.Tool }
func (HandlerPanic) Name() string               { return "handler-panic" }
func (f HandlerPanic) Params() string           { return "tool=" + f.Tool }
func (f Latency) Inject(_ context.Context, e *Env) error {
	return e.DocmostLink.Toxic("latency", "latency", "downstream", map[string]any{"latency": f.Ms})
}
func (Blackhole) Inject(_ context.Context, e *Env) error {
	return e.DocmostLink.Toxic("blackhole", "timeout", "upstream", map[string]any{"timeout": 0})
}
func (LinkDown) Inject(_ context.Context, e *Env) error { e.DocmostLink.Down(); return nil }
func (f ToolHang) Inject(_ context.Context, e *Env) error {
	e.Docmost.Set(f.Tool, upstream.Behavior{Kind: upstream.Hang})
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
