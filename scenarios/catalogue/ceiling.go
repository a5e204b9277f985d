package catalogue

// NotApplicableCeiling is the most catalogue rows a stateful proxy that
// claims every forwardable method may find not applicable: the rows of
// mcplocal's own tier (its stages, gate, session adoption, audit API, knobs
// and failpoints, and the incidents kept as replays of its audit trail),
// which no other proxy can be asked to run. They are 68 of 213 rows, under
// the goal of a third. The ceiling rises only with a row of mcplocal's own
// tier that no foreign proxy could run; a new row a foreign proxy could run
// is written to run there (docs/targets.md, "Proxy shapes").
const NotApplicableCeiling = 68

// StatelessNotApplicableCeiling is the most rows a stateless proxy with one
// path per server, forwarding what an upstream sends within a call
// (sampling, elicitation and roots among it) and speaking MCP 2026-07-28
// (a log level in each request's _meta, a subscriptions/listen stream for
// resource updates: harness.PerRequest), may find not applicable:
// mcplocal's own tier and the malformed session ids a stateless proxy reads
// none of: 69 of 213, under the goal of a third. Like NotApplicableCeiling,
// it rises only with a row of mcplocal's own tier.
const StatelessNotApplicableCeiling = 69
