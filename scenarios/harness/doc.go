// Package harness builds the world a scenario runs in: fake upstreams behind
// an in-process toxiproxy, the proxy under test (a Target), the faults
// injected into it, and clients. Its files are named by concern:
//
//   - target*.go: where the proxy under test runs. target.go (the Target
//     interface, InProcess), target_binary*.go (a built mcplocal),
//     target_container*.go (a Docker image), target_cluster*.go (replicas
//     behind HAProxy), target_foreign*.go (any MCP
//     proxy, from a target spec), target_live.go (a running proxy's URL),
//     target_adapt.go (tool names, budgets, headers a target adapts), and
//     target_lifecycle.go: the one lifecycle (spawn, readiness wait, stop,
//     kill, restart) of the out-of-process targets.
//   - fault*.go: the faults (fault.go), their registry built from
//     NAME[:k=v] (fault_registry.go), and the ingress hairpin (fault_hairpin.go).
//   - world*.go: the Env a scenario runs in (world.go), its toxiproxy links
//     (world_toxi.go), a world kept between rows of a warm run
//     (world_warm.go), what the admin suites read of it (world_admin.go),
//     and the names of package world's types (world_types.go).
//   - client*.go: the MCP clients (go-sdk, mcp-go, the TypeScript SDK).
//   - timeouts.go: the harness's own bounds, in one table.
//
// What a target runs (the World, its Bounds by name, the Failpoints armed)
// is described in package scenarios/world, in the harness's own
// terms. The harness imports nothing of the proxy: what is mcplocal's own
// (its configuration, knobs, in-process start, audit rows) is in its
// adapter, scenarios/evidence/mcplocal.
package harness
