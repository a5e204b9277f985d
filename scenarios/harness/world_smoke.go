package harness

import (
	"github.com/mcpchaos/mcpchaos/proxy/config"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Stage is one pipeline stage of the project an Env serves (EnvOptions.Pipeline).
// Suites that must not import the proxy (smoke) name stages through it.
type Stage = config.Stage

// ProductionKnobs are the proxy's default bounds, uncompressed: for suites
// about a healthy proxy rather than a compressed incident.
func ProductionKnobs() knobs.Values { return knobs.Defaults() }

// DefaultBounds are ProductionKnobs by name: what the harness assumes of a
// proxy that declares no budgets of its own.
func DefaultBounds() Bounds { return BoundsOf(knobs.Defaults()) }
