package harness

import (
	"fmt"
	"io"
)

// ForeignCluster runs N replicas of a foreign proxy (a command spec) behind
// HAProxy running the shipped docs/deploy/haproxy.cfg, as Cluster runs
// mcplocal's: each replica on its own free loopback port, rendered as
// Foreign renders the spec. HAProxy checks what the spec's cluster: block
// says (a path, or a TCP check). The replicas share a store only when the
// block declares one (store: postgres): the harness then starts a throwaway
// PostgreSQL and each replica sees it as {{.StoreDSN}} through its own
// toxiproxy link (PartitionStore and RestartStore apply). Without one, each
// replica keeps its own state.
//
// It adapts to the proxy as Foreign does (its capabilities, tool names,
// budgets, endpoint and headers), with HAProxy's address in place of the
// replica's.
type ForeignCluster struct {
	*Cluster
	proto *Foreign // the spec's adaptations, never started
}

// NewForeignCluster is a cluster of n replicas (default 2) of the proxy spec
// describes; stderr, if set, receives every process's output.
func NewForeignCluster(spec *ForeignSpec, n int, stderr io.Writer) *ForeignCluster {
	return &ForeignCluster{Cluster: &Cluster{Replicas: n, Stderr: stderr, foreign: spec}, proto: &Foreign{Spec: spec}}
}

// StoreSharer is implemented by clusters whose replicas may or may not share
// a store: a foreign cluster's share one when its spec declares it.
// mcplocal's cluster always shares its Postgres.
type StoreSharer interface {
	// SharedStore is the store the replicas share ("" for none).
	SharedStore() string
}

// Unshared says why t cannot run a scenario that needs its replicas to
// share a store ("" when they do, or t is no cluster that may lack one).
func Unshared(t Target) string {
	if s, ok := t.(StoreSharer); ok && s.SharedStore() == "" {
		return fmt.Sprintf("target %s declares no shared store (its spec's cluster: block has no store:): each replica keeps its own state", t.Name())
	}
	return ""
}

// AdoptsAcrossReplicas says whether t is held to mcplocal's promise across
// replicas: a session whose replica is gone is recreated on another for its
// owner, keeping its id, with one ⚠ notice, from the store the replicas
// share. A cluster is held to it only when it claims CapSessionAdoption and
// shares a store; otherwise a lost session may be refused with 404 (the MCP
// spec's answer: the client initializes again).
func AdoptsAcrossReplicas(t Target) bool {
	return Lacks(t, CapSessionAdoption) == "" && Unshared(t) == ""
}

var (
	_ Target           = (*ForeignCluster)(nil)
	_ Killer           = (*ForeignCluster)(nil)
	_ Capabilities     = (*ForeignCluster)(nil)
	_ Endpointer       = (*ForeignCluster)(nil)
	_ ServerEndpointer = (*ForeignCluster)(nil)
	_ Forwarder        = (*ForeignCluster)(nil)
	_ PromptNamer      = (*ForeignCluster)(nil)
	_ Stateless        = (*ForeignCluster)(nil)
	_ Speaker          = (*ForeignCluster)(nil)
	_ ToolNamer        = (*ForeignCluster)(nil)
	_ Budgeter         = (*ForeignCluster)(nil)
	_ Headerer         = (*ForeignCluster)(nil)
	_ BudgetDeclarer   = (*ForeignCluster)(nil)
	_ StoreSharer      = (*ForeignCluster)(nil)
)

// Spec is the foreign spec every replica runs.
func (f *ForeignCluster) Spec() *ForeignSpec { return f.proto.Spec }

// SharedStore implements StoreSharer: the spec's cluster: store:.
func (f *ForeignCluster) SharedStore() string { return f.proto.Spec.SharedStore() }

// Has implements Capabilities: the spec's claims.
func (f *ForeignCluster) Has(c string) bool { return f.proto.Has(c) }

// Forwards implements Forwarder.
func (f *ForeignCluster) Forwards(method string) bool { return f.proto.Forwards(method) }

// FrontsEverything implements EverythingFronter.
func (f *ForeignCluster) FrontsEverything() bool { return f.proto.FrontsEverything() }

// Stateless implements Stateless.
func (f *ForeignCluster) Stateless() bool { return f.proto.Stateless() }

// Protocol implements Speaker.
func (f *ForeignCluster) Protocol() string { return f.proto.Protocol() }

// ToolName implements ToolNamer.
func (f *ForeignCluster) ToolName(server, tool string) string { return f.proto.ToolName(server, tool) }

// PromptName implements PromptNamer.
func (f *ForeignCluster) PromptName(server, prompt string) string {
	return f.proto.PromptName(server, prompt)
}

// UndeclaredBudgets implements BudgetDeclarer.
func (f *ForeignCluster) UndeclaredBudgets() []string { return f.proto.UndeclaredBudgets() }

// Endpoint implements Endpointer: the spec's endpoint on HAProxy's address.
func (f *ForeignCluster) Endpoint(project string) string { return f.ServerEndpoint(project, "") }

// ServerEndpoint implements ServerEndpointer: the spec's endpoint for server
// on HAProxy's address.
func (f *ForeignCluster) ServerEndpoint(project, server string) string {
	f.mu.Lock()
	vars := ForeignVars{Listen: f.lbAddr, URL: "http://" + f.lbAddr, Server: server}
	if len(f.replicas) > 0 {
		if r, ok := f.replicas[0].(*Foreign); ok {
			r.mu.Lock()
			vars = r.vars
			r.mu.Unlock()
			vars.Listen, vars.URL, vars.Server = f.lbAddr, "http://"+f.lbAddr, server
		}
	}
	f.mu.Unlock()
	return f.proto.endpointFor(vars, project)
}

// Headers implements Headerer: the spec's headers as the first replica's
// render them (a header must be the same on every replica: HAProxy sends
// a client's request to any of them).
func (f *ForeignCluster) Headers() map[string]string {
	f.mu.Lock()
	var r *Foreign
	if len(f.replicas) > 0 {
		r, _ = f.replicas[0].(*Foreign)
	}
	f.mu.Unlock()
	if r == nil {
		return f.proto.Headers()
	}
	return r.Headers()
}
