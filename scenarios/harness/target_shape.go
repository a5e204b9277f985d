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
)

// ForwardableMethods lists every method a spec's forwards: may name, in the
// order docs/targets.md gives them.
var ForwardableMethods = []string{MethodPing, MethodListResources, MethodListTemplates, MethodRead, MethodSubscribe,
	MethodListPrompts, MethodPrompt, MethodComplete, MethodSetLevel, MethodProgress, MethodCancel, MethodSampling,
	MethodElicit, MethodRoots}

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

// Unforwarded says which of methods t does not claim to forward, as a
// reason for a not-applicable verdict ("" when it claims them all).
func Unforwarded(t Target, methods ...string) string {
	f, ok := t.(Forwarder)
	if !ok {
		return ""
	}
	var missing []string
	for _, m := range methods {
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

// checkForwards checks a spec's forwards: list.
func checkForwards(methods []string) error {
	for _, m := range methods {
		if !slices.Contains(ForwardableMethods, m) {
			return fmt.Errorf("forwards: unknown method %q (want some of %s)", m, strings.Join(ForwardableMethods, ", "))
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
