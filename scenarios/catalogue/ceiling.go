package catalogue

// NotApplicableCeiling is the most catalogue rows a stateful proxy that
// claims every forwardable method may find not applicable: the rows of
// mcplocal's own tier (its stages, gate, session adoption, audit API, knobs
// and failpoints, and the incidents kept as replays of its audit trail),
// which no other proxy can be asked to run. The goal is a third of the
// catalogue; today these rows are 62 of 167, past the third by the security
// rows that hold mcplocal's own knobs (session caps, batch and name bounds,
// refusals). The ceiling rises only with a row of mcplocal's own tier that
// no foreign proxy could run; a new row a foreign proxy could run is written
// to run there (docs/targets.md, "Proxy shapes").
const NotApplicableCeiling = 62
