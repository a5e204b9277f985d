package harness

import (
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// ProductionKnobs are the proxy's default bounds, uncompressed: for suites
// about a healthy proxy rather than a compressed incident.
func ProductionKnobs() knobs.Values { return knobs.Defaults() }

// DefaultBounds are ProductionKnobs by name: what the harness assumes of a
// proxy that declares no budgets of its own.
func DefaultBounds() Bounds { return BoundsOf(knobs.Defaults()) }
