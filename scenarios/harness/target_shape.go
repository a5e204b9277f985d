package harness

import (
	"fmt"
	"slices"
	"strings"
)

// A proxy's shape: how it exposes the fakes to a client, whatever its design.
// One aggregated endpoint or one path per server, any naming of tools and
// prompts, stateful or stateless, and which MCP methods it claims to
// forward. mcplocal's targets implement none of the interfaces below and
// have mcplocal's shape: one endpoint per project, SERVER_NAME names,
// stateful, every method forwarded.

// The MCP methods beyond tools/list and tools/call a proxy may claim to
// forward (a target spec's forwards:). A generic scenario about one of them
// applies to a target that claims it, and to no other.
const (
	MethodPing      = "ping"
	MethodRead      = "resources/read"
	MethodSubscribe = "resources/subscribe"
	MethodPrompt    = "prompts/get"
	MethodComplete  = "completion/complete"
	MethodSetLevel  = "logging/setLevel"
	MethodProgress  = "notifications/progress"
	MethodSampling  = "sampling/createMessage"
	MethodElicit    = "elicitation/create"

	MethodListResources = "resources/list"
	MethodListTemplates = "resources/templates/list"
	MethodListPrompts   = "prompts/list"
	MethodRoots         = "roots/list"
	MethodCancel        = "notifications/cancelled"

	// The newer revision's (PerRequestRevision) ways of what outlives a
	// request in the older ones: a log level each request carries in its
	// _meta (for logging/setLevel), and a stream of the client's own on
	// which the resources it names are updated (for resources/subscribe).
	MetaLogLevel = "io.modelcontextprotocol/logLevel"
	MethodListen = "subscriptions/listen"
)

// PerRequestRevision is the MCP revision in which a request carries its
// version, capabilities and log level in its own _meta (no initialize), and
// a client listens for resource updates on a subscriptions/listen stream of
// its own: what a stateless server can keep, as it keeps nothing between
// requests.
const PerRequestRevision = "2026-07-28"

// ClientRevision is the revision the harness's SDK clients speak to every
// target (and to a PerRequest one but on the rows of PerRequestRevision).
const ClientRevision = "2025-11-25"

// ForwardableMethods lists every method a spec's forwards: may name, in the
// order docs/targets.md gives them.
var ForwardableMethods = []string{MethodPing, MethodListResources, MethodListTemplates, MethodRead, MethodSubscribe,
	MethodListPrompts, MethodPrompt, MethodComplete, MethodSetLevel, MethodProgress, MethodCancel, MethodSampling,
	MethodElicit, MethodRoots}

// PerRequestWays are what a spec speaking PerRequestRevision may also name
// in its forwards:, the per-request ways of logging/setLevel and
// resources/subscribe.
var PerRequestWays = []string{MetaLogLevel, MethodListen}

// Forwarder is implemented by targets whose proxy forwards only some MCP
// methods beyond tools (a foreign proxy's forwards:).
type Forwarder interface {
	Forwards(method string) bool
}

// ServerEndpointer is implemented by targets whose proxy serves each
// upstream server on a path of its own: ServerEndpoint is the full URL of
// server's endpoint in project.
type ServerEndpointer interface {
	ServerEndpoint(project, server string) string
}

// PromptNamer is implemented by targets whose proxy names an upstream's
// prompts otherwise than mcplocal's SERVER_PROMPT.
type PromptNamer interface {
	PromptName(server, prompt string) string
}

// Stateless is implemented by targets that say whether their proxy is
// stateless: it issues no Mcp-Session-Id, so no promise about a session's
// lifecycle applies to it.
type Stateless interface {
	Stateless() bool
}

// Speaker is implemented by targets that say which MCP revision their proxy
// speaks beyond the harness's own (a foreign spec's protocol:).
type Speaker interface {
	Protocol() string
}

// PerRequest reports whether t's proxy is stateless and speaks
// PerRequestRevision: it is asked for a log level and a subscription that
// revision's way (MetaLogLevel, MethodListen), which a stateless proxy can
// carry, rather than by logging/setLevel and resources/subscribe.
func PerRequest(t Target) bool {
	s, ok := t.(Speaker)
	return ok && IsStateless(t) && s.Protocol() >= PerRequestRevision
}

// perRequestWay is what method is in PerRequestRevision: logging/setLevel
// and resources/subscribe have their per-request ways; the rest are as
// they were.
func perRequestWay(method string) string {
	switch method {
	case MethodSetLevel:
		return MetaLogLevel
	case MethodSubscribe:
		return MethodListen
	}
	return method
}

// Claims reports whether t claims to forward method, the per-request way of
// it on a PerRequest target; a target that is no Forwarder forwards all.
func Claims(t Target, method string) bool {
	f, ok := t.(Forwarder)
	if !ok {
		return true
	}
	if PerRequest(t) {
		method = perRequestWay(method)
	}
	return f.Forwards(method)
}

// Unforwarded says which of methods t does not claim to forward, as a
// reason for a not-applicable verdict ("" when it claims them all). A
// PerRequest target is asked for the per-request way of each.
func Unforwarded(t Target, methods ...string) string {
	f, ok := t.(Forwarder)
	if !ok {
		return ""
	}
	var missing []string
	for _, m := range methods {
		if PerRequest(t) {
			m = perRequestWay(m)
		}
		if !f.Forwards(m) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	why := fmt.Sprintf("target %s does not claim to forward %s", t.Name(), strings.Join(missing, ", "))
	if IsStateless(t) && slices.ContainsFunc(missing, outlivesItsRequest) {
		why += ": it is stateless, and a subscription or a log level a request sets outlives that request"
	}
	return why
}

// outlivesItsRequest reports whether method sets something later requests
// need (a subscription, a log level): a stateless proxy keeps nothing
// between requests to carry it.
func outlivesItsRequest(method string) bool {
	return method == MethodSubscribe || method == MethodSetLevel
}

// IsStateless reports whether t declares its proxy stateless.
func IsStateless(t Target) bool {
	s, ok := t.(Stateless)
	return ok && s.Stateless()
}

// NeedsSessions is a catalogue Scenario.Needs hook for scenarios about a
// session's lifecycle: not applicable to a stateless proxy.
func NeedsSessions(t Target) string {
	if IsStateless(t) {
		return fmt.Sprintf("target %s is stateless: it issues no Mcp-Session-Id, so there is no session to keep or end", t.Name())
	}
	return ""
}

// PromptName is t's name for prompt of server: mcplocal's SERVER_PROMPT
// unless t is a PromptNamer.
func PromptName(t Target, server, prompt string) string {
	if n, ok := t.(PromptNamer); ok {
		return n.PromptName(server, prompt)
	}
	return server + "_" + prompt
}

// ServerURL is the MCP endpoint through which the client reaches server of
// the harness project: its own path on a proxy with one path per server, the
// project's endpoint otherwise.
func (e *Env) ServerURL(server string) string {
	if server == "everything" {
		server = everythingAs(e.Target)
	}
	if se, ok := e.Target.(ServerEndpointer); ok {
		return se.ServerEndpoint(Project, server)
	}
	return e.ProjectURL()
}

// EverythingTool is the proxy's name for a tool of the everything fake.
func (e *Env) EverythingTool(tool string) string {
	return ToolName(e.Target, everythingAs(e.Target), tool)
}

// EverythingPrompt is the proxy's name for a prompt of the everything fake.
func (e *Env) EverythingPrompt(prompt string) string {
	return PromptName(e.Target, everythingAs(e.Target), prompt)
}

// everythingAs is the server name under which t's proxy fronts the
// everything fake: "everything", or "docmost" for a proxy that fronts one
// upstream server (StandsIn).
func everythingAs(t Target) string {
	if StandsIn(t) {
		return "docmost"
	}
	return "everything"
}

// StandsIn reports whether, in a world with the everything fake, that fake
// stands in for docmost on t: t's proxy fronts one upstream server (its
// spec gives it {{.DocmostURL}} and never {{.EverythingURL}}), so it is
// given the everything fake at {{.DocmostURL}} and reached under docmost's
// name and path. A proxy built around one server (a stdio bridge, a
// gateway for one backend) is held to every generic row that way.
func StandsIn(t Target) bool {
	f, ok := t.(EverythingFronter)
	return ok && !f.FrontsEverything()
}

// checkForwards checks a spec's forwards: list against the revision it
// speaks (protocol:): the per-request ways are PerRequestRevision's.
func checkForwards(methods []string, protocol string) error {
	for _, m := range methods {
		if !slices.Contains(ForwardableMethods, m) && !slices.Contains(PerRequestWays, m) {
			return fmt.Errorf("forwards: unknown method %q (want some of %s)", m, strings.Join(append(slices.Clone(ForwardableMethods), PerRequestWays...), ", "))
		}
		if slices.Contains(PerRequestWays, m) && protocol < PerRequestRevision {
			return fmt.Errorf("forwards: %s is the way of MCP %s: want protocol: %s", m, PerRequestRevision, PerRequestRevision)
		}
	}
	return nil
}

// EverythingFronter is implemented by targets that may or may not front the
// everything fake: a foreign spec does when one of its templates uses
// {{.EverythingURL}}. mcplocal's targets front it in every world that has it.
type EverythingFronter interface {
	FrontsEverything() bool
}
