package harness

import (
	"time"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
)

// FaultInfo describes one fault of the catalogue for `mcpchaos faults` and
// docs/faults.md.
type FaultInfo struct {
	Name    string
	Class   string // network, upstream, llm, process, config
	Params  string // its typed parameters
	Summary string
	Example Fault // a value, as scenarios use it
}

// Faults lists every fault the harness can inject, one entry per fault type
// (the LLM behaviours are listed by `mcpchaos faults` from fakes/llm's own
// catalogue).
func Faults() []FaultInfo {
	return []FaultInfo{
		{"none", "baseline", "", "no fault: every promise must hold on a healthy topology", None{}},
		{"latency", "network", "link, latencyMs", "delays every byte coming back over the link", Latency{Ms: 100}},
		{"bandwidth", "network", "link, rateKBps (0 stalls)", "caps the rate of what comes back over the link", Bandwidth{KBps: 0}},
		{"blackhole", "network", "link", "accepts connections and never answers (toxiproxy timeout=0)", Blackhole{}},
		{"reset-peer", "network", "link, timeoutMs", "resets connections after the timeout", ResetPeer{TimeoutMs: 10}},
		{"slicer", "network", "link, averageSize, delayUs", "fragments what comes back, with delays between pieces", Slicer{AvgBytes: 64, DelayUs: 200}},
		{"limit-data", "network", "link, bytes", "closes connections after that many bytes came back", LimitData{Bytes: 2048}},
		{"down", "network", "link", "refuses connections (the link is stopped)", LinkDown{}},
		{"tool-hang", "upstream", "tool", "the upstream tool never answers until cancelled", ToolHang{Tool: "search"}},
		{"tool-slow", "upstream", "tool, delay", "the upstream tool answers after the delay", ToolSlow{Tool: "search", Delay: 2 * time.Second}},
		{"tool-error", "upstream", "tool", "the upstream tool answers isError: true", ToolError{Tool: "search"}},
		{"ingress-hairpin", "upstream", "link", "an L7 proxy in front of the upstream answers every call with a bare 403 text/plain `Access denied`", IngressHairpin{}},
		{"upstream-restart", "upstream", "", "the upstream stops and starts again on the same address mid-operation, forgetting the proxy's session", UpstreamRestart{}},
		{"llm-<behaviour>", "llm", "step (a fakes/llm behaviour, e.g. hang_before_headers, slow:5s, not_found)", "the primary fake LLM misbehaves for every model", LLMFault{Step: fakellm.Step{Kind: fakellm.HangBeforeHeaders}}},
		{"no-llm-configured", "config", "", "the proxy has no llm block: a choice, not a fault; nothing may claim a degradation", NoLLM{}},
		{"handler-panic", "process", "tool (prefixed)", "a failpoint panics inside the proxy's tools/call handler", HandlerPanic{Tool: "docmost_update_page"}},
		{"handler-hang", "process", "tool (prefixed)", "a failpoint blocks inside the proxy's tools/call handler until the request's context ends", HandlerHang{Tool: "docmost_update_page"}},
		{"proxy-restart", "process", "", "the proxy stops gracefully and starts on the same port mid-operation", ProxyRestart{}},
		{"proxy-kill", "process", "", "the proxy is SIGKILLed and started on the same port mid-operation (process targets)", ProxyKill{}},
	}
}
