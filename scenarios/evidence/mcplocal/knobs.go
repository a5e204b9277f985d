package mcplocal

import (
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// mcplocal's knobs as the harness's bounds: every knob of the one table
// (proxy/knobs.Table), named as the proxy reads it.

// Knobs is mcplocal's knob set, for mcplocal's own suites that set a knob
// by its field.
type Knobs = knobs.Values

// BoundsOf are the knobs kv as bounds, by name.
func BoundsOf(kv Knobs) world.Bounds {
	raw := make(map[string]int64, len(knobs.Table))
	for _, k := range knobs.Table {
		raw[k.Env] = k.Raw(kv)
	}
	return world.NewBounds(raw)
}

// KnobsOf are the bounds b as mcplocal's knobs: the defaults for a knob b
// does not name. A bound mcplocal has no knob for panics: it is a misspelt
// name, not a bound to leave out.
func KnobsOf(b world.Bounds) Knobs {
	v := knobs.Defaults()
	for name, n := range b.Raw() {
		if !v.SetRaw(name, n) {
			panic("mcplocal: no knob named " + name)
		}
	}
	return v
}

// Defaults are mcplocal's default knobs, uncompressed: for suites that
// measure the production bounds.
func Defaults() Knobs { return knobs.Defaults() }

// DefaultBounds are Defaults() by name: what the harness assumes of a proxy
// that declares no budget of its own.
func DefaultBounds() world.Bounds { return BoundsOf(knobs.Defaults()) }

// Compressed are knobs with every bound compressed to milliseconds, so that
// a scenario that waits out a budget takes well under a second or two.
func Compressed() Knobs {
	v := knobs.Defaults()
	v.LLMCallBudget = 600 * time.Millisecond
	v.LLMProviderTimeout = 300 * time.Millisecond
	v.StageLLMBudget = 800 * time.Millisecond
	v.GateLLMTimeout = 400 * time.Millisecond
	v.PaginationLLMTimeout = 400 * time.Millisecond
	v.RequestDeadline = 1500 * time.Millisecond
	v.UpstreamCallTimeout = 1000 * time.Millisecond
	v.UpstreamConnect = 1000 * time.Millisecond
	v.AuditWriteTimeout = 500 * time.Millisecond
	v.ReadyTimeout = 500 * time.Millisecond
	v.ShutdownGrace = 200 * time.Millisecond
	v.ChatBudget = 800 * time.Millisecond
	return v
}

// CompressedBounds are Compressed() by name.
func CompressedBounds() world.Bounds { return BoundsOf(Compressed()) }

// offRequestPath are the knobs that bound housekeeping, not a request: an
// incident's time compression leaves them alone.
var offRequestPath = map[string]bool{
	"MCPCTL_AUDIT_WRITE_TIMEOUT_MS": true,
	"MCPCTL_AUDIT_QUERY_TIMEOUT_MS": true,
	"MCPCTL_READY_TIMEOUT_MS":       true,
	"MCPCTL_SHUTDOWN_GRACE_MS":      true,
	"MCPCTL_SESSION_IDLE_MS":        true,
	"MCPCTL_SESSION_RECORD_TTL_MS":  true,
}

// CompressBy are the default knobs with every request-path bound divided by
// factor: the production bounds, time-compressed, for reproductions that
// keep their proportions.
func CompressBy(factor int) Knobs {
	v := knobs.Defaults()
	for _, k := range knobs.Table {
		if offRequestPath[k.Env] || k.Unit != knobs.Millis {
			continue
		}
		d, _ := v.Get(k.Env)
		if d == 0 {
			continue // a wait that is off stays off
		}
		v.Set(k.Env, max((d/time.Duration(factor)).Round(time.Millisecond), time.Millisecond))
	}
	return v
}
