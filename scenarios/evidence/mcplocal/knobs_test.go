package mcplocal

import (
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// Bounds and knobs are one set of values under two names: a round trip
// through the knobs changes nothing, and a bound set by name is the knob
// the proxy is given.
func TestBoundsAreTheKnobsByName(t *testing.T) {
	if KnobsOf(CompressedBounds()) != Compressed() {
		t.Error("the compressed knobs do not survive a round trip through their names")
	}
	b := CompressedBounds().WithD(world.BoundRequest, 2500*time.Millisecond).With(world.BoundSessions, 7)
	kv := KnobsOf(b)
	if kv.RequestDeadline != 2500*time.Millisecond || kv.SessionsMax != 7 {
		t.Errorf("set by name: request deadline %v, sessions %d; want 2.5s and 7", kv.RequestDeadline, kv.SessionsMax)
	}
	if got := BoundsOf(kv).D(world.BoundRequest); got != 2500*time.Millisecond {
		t.Errorf("read back by name: %v", got)
	}
}

// A bound mcplocal has no knob for is a misspelt name: KnobsOf panics
// rather than run the proxy without it.
func TestABoundMcplocalHasNoKnobForPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Error("KnobsOf took a bound mcplocal has no knob for")
		}
	}()
	KnobsOf(world.NewBounds(map[string]int64{"MCPCTL_NO_SUCH_MS": 1}))
}

// CompressBy divides the request path's bounds and leaves housekeeping
// (the audit writer, the session record's life) and counts alone.
func TestCompressByKeepsHousekeepingAndCounts(t *testing.T) {
	d, c := Defaults(), CompressBy(10)
	if c.RequestDeadline != d.RequestDeadline/10 || c.UpstreamCallTimeout != d.UpstreamCallTimeout/10 {
		t.Errorf("request path: deadline %v, upstream %v; want a tenth of %v and %v", c.RequestDeadline, c.UpstreamCallTimeout, d.RequestDeadline, d.UpstreamCallTimeout)
	}
	if c.AuditWriteTimeout != d.AuditWriteTimeout || c.SessionRecordTTL != d.SessionRecordTTL || c.ConnsMax != d.ConnsMax {
		t.Error("CompressBy changed a housekeeping bound or a count")
	}
}

// A duration knob is a bound in whole milliseconds, rounded up: never below
// the knob the proxy would have run under.
func TestAKnobBetweenMillisecondsRoundsUp(t *testing.T) {
	kv := Compressed()
	kv.AuditWriteTimeout = 1500 * time.Microsecond
	if got := BoundsOf(kv).N("MCPCTL_AUDIT_WRITE_TIMEOUT_MS"); got != 2 {
		t.Errorf("1.5 ms is the bound %d ms, want 2", got)
	}
}

// Compressed shortens bounds so that a scenario waiting one out takes well
// under a second or two: every knob it changes stays on (above 0, which
// would turn a wait off or take its default), is shorter than its default,
// at most 1.5 s; the budgets the core reads by name are among them; and the
// knobs still agree with each other.
func TestCompressedBoundsAreShortButOn(t *testing.T) {
	d, c := Defaults(), Compressed()
	changed := map[string]bool{}
	for _, k := range knobs.Table {
		if k.Unit != knobs.Millis {
			continue
		}
		dv, _ := d.Get(k.Env)
		cv, _ := c.Get(k.Env)
		if cv == dv {
			continue
		}
		changed[k.Env] = true
		if cv <= 0 || cv >= dv || cv > 1500*time.Millisecond {
			t.Errorf("%s compressed to %v (default %v): want above 0, below the default, at most 1.5s", k.Env, cv, dv)
		}
	}
	for _, name := range []string{world.BoundRequest, world.BoundUpstreamCall, world.BoundPagination, world.BoundStage,
		world.BoundGate, world.BoundChat, world.BoundReady, world.BoundShutdownGrace} {
		if !changed[name] {
			t.Errorf("%s is not compressed", name)
		}
	}
	if err := c.Check(); err != nil {
		t.Errorf("the compressed knobs contradict each other: %v", err)
	}
}
