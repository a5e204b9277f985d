package harness

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
)

// FaultKind is one entry of the fault registry: how to build a fault from its
// name and parameters, as toxiproxy builds its toxics. `mcpchaos faults`
// lists the registry; `mcpchaos run --fault NAME[:k=v,...]` injects one.
type FaultKind struct {
	Name    string
	Class   string // baseline, network, upstream, llm, config, process
	Summary string
	// Family, when set, is the docs/faults.md section that covers this kind
	// with its siblings ("llm-<behaviour>").
	Family string
	// Params are the parameters, with their defaults, in the order listed.
	Params []Param
	// Build makes the fault from a complete set of parameter values (every
	// default filled in); a value that does not parse is an error.
	Build func(a *Args) Fault
}

// Param is one parameter of a fault kind.
type Param struct {
	Name    string
	Default string
	Doc     string
}

// Default builds the kind's fault with every parameter at its default.
func (k FaultKind) Default() Fault {
	f, err := k.build(nil)
	if err != nil {
		panic(fmt.Sprintf("fault %s: its defaults do not build: %v", k.Name, err)) // a registry bug, caught by its test
	}
	return f
}

// Usage renders the kind as --fault takes it: NAME[:k=default,...].
func (k FaultKind) Usage() string {
	if len(k.Params) == 0 {
		return k.Name
	}
	parts := make([]string, len(k.Params))
	for i, p := range k.Params {
		parts[i] = p.Name + "=" + p.Default
	}
	return k.Name + ":" + strings.Join(parts, ",")
}

func (k FaultKind) build(given map[string]string) (Fault, error) {
	a := &Args{kind: k.Name, vals: map[string]string{}}
	for _, p := range k.Params {
		a.vals[p.Name] = p.Default
	}
	for n, v := range given {
		a.vals[n] = v
	}
	f := k.Build(a)
	if len(a.errs) > 0 {
		return nil, a.errs[0]
	}
	return f, nil
}

// Args are the parameter values a FaultKind builds from; a getter records a
// value that does not parse, and the build fails with that error.
type Args struct {
	kind string
	vals map[string]string
	errs []error
}

// Str is parameter name's value.
func (a *Args) Str(name string) string { return a.vals[name] }

// Int is parameter name's value as a non-negative integer.
func (a *Args) Int(name string) int {
	n, err := strconv.Atoi(a.vals[name])
	if err != nil || n < 0 {
		a.errs = append(a.errs, fmt.Errorf("fault %s: %s=%q is not a non-negative integer", a.kind, name, a.vals[name]))
	}
	return n
}

// Dur is parameter name's value as a Go duration ("250ms", "5s").
func (a *Args) Dur(name string) time.Duration {
	d, err := time.ParseDuration(a.vals[name])
	if err != nil || d < 0 {
		a.errs = append(a.errs, fmt.Errorf("fault %s: %s=%q is not a duration such as 250ms or 5s", a.kind, name, a.vals[name]))
	}
	return d
}

// Link is parameter link's value, checked against the links the harness has.
func (a *Args) Link() string {
	l := a.vals["link"]
	if !slices.Contains(Links, l) {
		a.errs = append(a.errs, fmt.Errorf("fault %s: link=%q is not a link (want %s)", a.kind, l, strings.Join(Links, ", ")))
	}
	return l
}

// Links are the toxiproxy links a network fault may take.
var Links = []string{LinkDocmost, LinkLLM, LinkEverything, LinkController}

var linkParam = Param{"link", LinkDocmost, "the toxiproxy link: " + strings.Join(Links, ", ")}

// Faults is the registry: every fault the harness can inject, one kind per
// fault (one per fakes/llm behaviour for the LLM), in a stable order.
func Faults() []FaultKind {
	out := []FaultKind{
		{Name: "none", Class: "baseline", Summary: "no fault: every promise must hold on a healthy topology",
			Build: func(*Args) Fault { return None{} }},
		{Name: "latency", Class: "network", Summary: "delays every byte coming back over the link",
			Params: []Param{linkParam, {"latencyMs", "100", "the delay, in milliseconds"}},
			Build:  func(a *Args) Fault { return Latency{Link: a.Link(), Ms: a.Int("latencyMs")} }},
		{Name: "bandwidth", Class: "network", Summary: "caps the rate of what comes back over the link",
			Params: []Param{linkParam, {"rateKBps", "0", "the rate in KB/s; 0 stalls the link"}},
			Build:  func(a *Args) Fault { return Bandwidth{Link: a.Link(), KBps: a.Int("rateKBps")} }},
		{Name: "blackhole", Class: "network", Summary: "accepts connections and never answers (toxiproxy timeout=0)",
			Params: []Param{linkParam},
			Build:  func(a *Args) Fault { return Blackhole{Link: a.Link()} }},
		{Name: "reset-peer", Class: "network", Summary: "resets connections after the timeout",
			Params: []Param{linkParam, {"timeoutMs", "1", "milliseconds before the reset"}},
			Build:  func(a *Args) Fault { return ResetPeer{Link: a.Link(), TimeoutMs: a.Int("timeoutMs")} }},
		{Name: "slicer", Class: "network", Summary: "fragments what comes back, with delays between pieces",
			Params: []Param{linkParam, {"averageSize", "64", "average piece, in bytes"}, {"delayUs", "200", "delay between pieces, in microseconds"}},
			Build: func(a *Args) Fault {
				return Slicer{Link: a.Link(), AvgBytes: a.Int("averageSize"), DelayUs: a.Int("delayUs")}
			}},
		{Name: "limit-data", Class: "network", Summary: "closes connections after that many bytes came back",
			Params: []Param{linkParam, {"bytes", "2048", "bytes let through"}},
			Build:  func(a *Args) Fault { return LimitData{Link: a.Link(), Bytes: a.Int("bytes")} }},
		{Name: "down", Class: "network", Summary: "refuses connections (the link is stopped)",
			Params: []Param{linkParam},
			Build:  func(a *Args) Fault { return LinkDown{Link: a.Link()} }},
		{Name: "tool-hang", Class: "upstream", Summary: "the upstream tool never answers until cancelled",
			Params: []Param{{"tool", "search", "the upstream tool (unprefixed)"}, {"server", "", "empty for docmost, or everything"}},
			Build: func(a *Args) Fault {
				s := a.Str("server")
				if s != "" && s != LinkEverything {
					a.errs = append(a.errs, fmt.Errorf("fault tool-hang: server=%q (want empty for docmost, or %s)", s, LinkEverything))
				}
				return ToolHang{Tool: a.Str("tool"), Server: s}
			}},
		{Name: "tool-slow", Class: "upstream", Summary: "the upstream tool answers after the delay",
			Params: []Param{{"tool", "search", "the upstream tool (unprefixed)"}, {"delay", "2s", "how late it answers"}},
			Build:  func(a *Args) Fault { return ToolSlow{Tool: a.Str("tool"), Delay: a.Dur("delay")} }},
		{Name: "tool-error", Class: "upstream", Summary: "the upstream tool answers isError: true",
			Params: []Param{{"tool", "search", "the upstream tool (unprefixed)"}},
			Build:  func(a *Args) Fault { return ToolError{Tool: a.Str("tool")} }},
		{Name: "handshake-stall", Class: "upstream", Summary: "the upstream answers initialize with a session id, then holds every other request (the handshake's second half, calls, the DELETE) until the caller goes away",
			Build: func(*Args) Fault { return HandshakeStall{} }},
		{Name: "ingress-hairpin", Class: "upstream", Summary: "an L7 proxy in front of the upstream answers every call with a bare 403 text/plain `Access denied`",
			Params: []Param{linkParam},
			Build:  func(a *Args) Fault { return IngressHairpin{Link: a.Link()} }},
		{Name: "upstream-restart", Class: "upstream", Summary: "the upstream stops and starts again on the same address mid-operation, forgetting the proxy's session",
			Build: func(*Args) Fault { return UpstreamRestart{} }},
		{Name: "llm-random", Class: "llm", Summary: "the primary fake LLM draws each answer among the behaviours, from the scenario's seed",
			Params: []Param{{"choices", "ok+hang_before_headers+not_found+overloaded", "behaviours drawn with equal weight, joined by +"}},
			Build: func(a *Args) Fault {
				var f LLMRandom
				for _, s := range strings.Split(a.Str("choices"), "+") {
					st, err := fakellm.ParseStep(s)
					if err != nil {
						a.errs = append(a.errs, fmt.Errorf("fault llm-random: choices: %w", err))
						continue
					}
					if st.Kind == fakellm.OK && st.Text == "" {
						st.Text = LLMTitles
					}
					f.Choices = append(f.Choices, fakellm.Choice{Step: st, Weight: 1})
				}
				return f
			}},
		{Name: "no-llm-configured", Class: "config", Summary: "the proxy has no llm block: a choice, not a fault; nothing may claim a degradation",
			Build: func(*Args) Fault { return NoLLM{} }},
		{Name: "handler-panic", Class: "process", Summary: "a failpoint panics inside the proxy's tools/call handler",
			Params: []Param{{"tool", "docmost_update_page", "the proxy's (prefixed) tool name"}},
			Build:  func(a *Args) Fault { return HandlerPanic{Tool: a.Str("tool")} }},
		{Name: "handler-hang", Class: "process", Summary: "a failpoint blocks inside the proxy's tools/call handler until the request's context ends",
			Params: []Param{{"tool", "docmost_update_page", "the proxy's (prefixed) tool name"}},
			Build:  func(a *Args) Fault { return HandlerHang{Tool: a.Str("tool")} }},
		{Name: "proxy-restart", Class: "process", Summary: "the proxy stops gracefully and starts on the same port mid-operation",
			Build: func(*Args) Fault { return ProxyRestart{} }},
		{Name: "proxy-kill", Class: "process", Summary: "the proxy is SIGKILLed and started on the same port mid-operation (process targets)",
			Build: func(*Args) Fault { return ProxyKill{} }},
	}
	for _, k := range fakellm.Catalogue() {
		kind, delay := k.Kind, "0s"
		if kind == fakellm.Slow {
			delay = "5s" // past every compressed LLM timeout
		}
		out = append(out, FaultKind{Name: "llm-" + string(kind), Class: "llm", Family: "llm-<behaviour>",
			Summary: "the primary fake LLM, for every model: " + k.Summary,
			Params:  []Param{{"delay", delay, "the wait of slow, the retry-after of rate_limited"}},
			Build: func(a *Args) Fault {
				return LLMFault{Step: fakellm.Step{Kind: kind, Delay: a.Dur("delay")}}
			}})
	}
	return out
}

// LLMTitles is what llm-random's ok draws answer: page titles, one a line.
const LLMTitles = "Cluster notes\nBackup runbook\nRestore drill\nNetwork policy\nUpgrade plan\nGateway DNS\nAlerts"

// ParseFault builds a fault from NAME[:k=v,k=v] (the registry's names and
// parameters; a parameter left out takes its default).
func ParseFault(spec string) (Fault, error) {
	name, rest, hasParams := strings.Cut(strings.TrimSpace(spec), ":")
	var kind *FaultKind
	reg := Faults()
	for i := range reg {
		if reg[i].Name == name {
			kind = &reg[i]
		}
	}
	if kind == nil {
		names := make([]string, len(reg))
		for i, k := range reg {
			names[i] = k.Name
		}
		return nil, fmt.Errorf("unknown fault %q (`mcpchaos faults` lists them: %s)", name, strings.Join(names, ", "))
	}
	given := map[string]string{}
	if hasParams {
		for _, kv := range strings.Split(rest, ",") {
			k, v, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, fmt.Errorf("fault %s: parameter %q is not k=v", name, kv)
			}
			if !slices.ContainsFunc(kind.Params, func(p Param) bool { return p.Name == k }) {
				return nil, fmt.Errorf("fault %s: unknown parameter %q (%s)", name, k, kind.paramNames())
			}
			if _, dup := given[k]; dup {
				return nil, fmt.Errorf("fault %s: parameter %q given twice", name, k)
			}
			given[k] = strings.TrimSpace(v)
		}
	}
	return kind.build(given)
}

func (k FaultKind) paramNames() string {
	if len(k.Params) == 0 {
		return "it takes none"
	}
	names := make([]string, len(k.Params))
	for i, p := range k.Params {
		names[i] = p.Name
	}
	return "want " + strings.Join(names, ", ")
}
