package world

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Bounds are the bounds a proxy runs under and a verdict is judged against,
// by name: each is a number in its unit (milliseconds for a duration, else a
// count or a size), named as the proxy reads it (MCPCTL_REQUEST_DEADLINE_MS).
// The harness core knows a bound by its name alone; a target that runs
// mcplocal turns them into the proxy's own knobs, and a foreign target's
// declared budgets replace the ones it names.
//
// A Bounds is a value: With returns a changed copy. Reading or setting a
// name it does not hold panics, so a misspelt name fails the first test
// that reads it instead of judging against zero.
type Bounds struct{ raw map[string]int64 }

// The bounds the core reads by name: a scenario's budget, a fault timed
// against it, the windows a check waits within.
const (
	BoundRequest        = "MCPCTL_REQUEST_DEADLINE_MS"
	BoundUpstreamCall   = "MCPCTL_UPSTREAM_CALL_TIMEOUT_MS"
	BoundPagination     = "MCPCTL_PAGINATION_LLM_TIMEOUT_MS"
	BoundStage          = "MCPCTL_STAGE_LLM_BUDGET_MS"
	BoundGate           = "MCPCTL_GATE_LLM_TIMEOUT_MS"
	BoundChat           = "MCPCTL_CHAT_BUDGET_MS"
	BoundReady          = "MCPCTL_READY_TIMEOUT_MS"
	BoundReadTimeout    = "MCPCTL_READ_TIMEOUT_MS"
	BoundIdleConn       = "MCPCTL_IDLE_CONN_TIMEOUT_MS"
	BoundStopDrain      = "MCPCTL_STOP_DRAIN_MS"
	BoundShutdownGrace  = "MCPCTL_SHUTDOWN_GRACE_MS"
	BoundSessionIdle    = "MCPCTL_SESSION_IDLE_MS"
	BoundSessionTTL     = "MCPCTL_SESSION_RECORD_TTL_MS"
	BoundSessions       = "MCPCTL_SESSIONS_MAX"
	BoundSessionsUser   = "MCPCTL_SESSIONS_PER_USER_MAX"
	BoundConns          = "MCPCTL_CONNS_MAX"
	BoundBatch          = "MCPCTL_BATCH_MAX"
	BoundHeaderBytes    = "MCPCTL_MAX_HEADER_BYTES"
	BoundNameBytes      = "MCPCTL_MAX_NAME_BYTES"
	BoundUpstreamAnswer = "MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES"
)

// NewBounds holds raw, by name (copied).
func NewBounds(raw map[string]int64) Bounds { return Bounds{raw: maps.Clone(raw)} }

// Names lists the bounds b holds, sorted.
func (b Bounds) Names() []string { return slices.Sorted(maps.Keys(b.raw)) }

// Has reports whether b holds a bound named name.
func (b Bounds) Has(name string) bool {
	_, ok := b.raw[name]
	return ok
}

// N is the bound name in its unit.
func (b Bounds) N(name string) int64 {
	n, ok := b.raw[name]
	if !ok {
		panic(fmt.Sprintf("harness: no bound named %s (the bounds held: %d)", name, len(b.raw)))
	}
	return n
}

// D is the duration bound name (held in milliseconds).
func (b Bounds) D(name string) time.Duration { return time.Duration(b.N(name)) * time.Millisecond }

// With is b with name set to n, in its unit.
func (b Bounds) With(name string, n int64) Bounds {
	b.N(name) // a bound b does not hold is a misspelt name
	out := NewBounds(b.raw)
	out.raw[name] = n
	return out
}

// WithD is b with the duration bound name set to d (to the millisecond).
func (b Bounds) WithD(name string, d time.Duration) Bounds { return b.With(name, d.Milliseconds()) }

// Environ is every bound of b with a positive value as NAME=value, in its
// unit, sorted: what a proxy process is given to run under b (a bound at 0
// takes the proxy's default).
func (b Bounds) Environ() []string {
	var env []string
	for _, name := range b.Names() {
		if n := b.raw[name]; n > 0 {
			env = append(env, name+"="+strconv.FormatInt(n, 10))
		}
	}
	return env
}

// IsZero reports whether b holds no bound at all (a Spec that names none:
// the proxy's defaults).
func (b Bounds) IsZero() bool { return len(b.raw) == 0 }

// MarshalJSON writes the bounds as their names and values, so that two
// worlds' options that differ only in their bounds do not read the same
// (a warm run keys its kept worlds by its options' JSON).
func (b Bounds) MarshalJSON() ([]byte, error) { return json.Marshal(b.raw) }

// Raw is a copy of every bound, by name.
func (b Bounds) Raw() map[string]int64 { return maps.Clone(b.raw) }
