package harness

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The names the core reads are mcplocal's knobs, every one: a misspelt
// constant would panic in the first verdict that reads it.
func TestEveryBoundTheCoreNamesIsAKnob(t *testing.T) {
	names := []string{BoundRequest, BoundUpstreamCall, BoundPagination, BoundStage, BoundGate, BoundChat,
		BoundReady, BoundReadTimeout, BoundIdleConn, BoundStopDrain, BoundShutdownGrace, BoundSessionIdle,
		BoundSessionTTL, BoundSessions, BoundSessionsUser, BoundConns, BoundBatch, BoundHeaderBytes,
		BoundNameBytes, BoundUpstreamAnswer}
	all := DefaultBounds()
	for _, n := range names {
		if !all.Has(n) {
			t.Errorf("%s is not one of mcplocal's knobs (%v)", n, all.Names())
		}
	}
	if len(all.Names()) < len(names) {
		t.Errorf("the default bounds hold %d names, fewer than the core reads", len(all.Names()))
	}
}

// Bounds and knobs are one set of values under two names: a round trip
// through the knobs changes nothing, and a bound set by name is the knob
// the proxy is given.
func TestBoundsAreTheKnobsByName(t *testing.T) {
	if knobsOf(CompressedBounds()) != Compressed() {
		t.Error("the compressed knobs do not survive a round trip through their names")
	}
	b := CompressedBounds().WithD(BoundRequest, 2500*time.Millisecond).With(BoundSessions, 7)
	kv := knobsOf(b)
	if kv.RequestDeadline != 2500*time.Millisecond || kv.SessionsMax != 7 {
		t.Errorf("set by name: request deadline %v, sessions %d; want 2.5s and 7", kv.RequestDeadline, kv.SessionsMax)
	}
	if got := BoundsOf(kv).D(BoundRequest); got != 2500*time.Millisecond {
		t.Errorf("read back by name: %v", got)
	}
	if got := JudgedOn(&InProcess{}, b).Bounds().N(BoundSessions); got != 7 {
		t.Errorf("a world judged on bounds holds sessions %d, want 7", got)
	}
}

// A Bounds is a value: With changes a copy, never the bounds it was made
// from, nor the map it was built on.
func TestBoundsAreValues(t *testing.T) {
	raw := map[string]int64{"A_MS": 100, "B_MAX": 3}
	b := NewBounds(raw)
	raw["A_MS"] = 1
	c := b.With("A_MS", 250)
	if b.D("A_MS") != 100*time.Millisecond || c.D("A_MS") != 250*time.Millisecond {
		t.Errorf("b %v c %v: want 100ms and 250ms", b.D("A_MS"), c.D("A_MS"))
	}
	got := c.Raw()
	got["B_MAX"] = 99
	if c.N("B_MAX") != 3 {
		t.Error("Raw gave the bounds' own map")
	}
	if n := strings.Join(b.Names(), ","); n != "A_MS,B_MAX" {
		t.Errorf("names %q, want sorted A_MS,B_MAX", n)
	}
	if b.WithD("A_MS", 1500*time.Microsecond).N("A_MS") != 1 {
		t.Error("a duration is held in whole milliseconds")
	}
}

// A name the bounds do not hold panics, naming it: a verdict never reads
// zero for a misspelt bound.
func TestAnUnknownBoundPanics(t *testing.T) {
	b := NewBounds(map[string]int64{"A_MS": 1})
	for what, f := range map[string]func(){
		"read": func() { b.D("MCPCTL_NO_SUCH_MS") },
		"set":  func() { b.With("MCPCTL_NO_SUCH_MS", 1) },
	} {
		func() {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), "MCPCTL_NO_SUCH_MS") {
					t.Errorf("%s of an unknown bound: recovered %v, want a panic naming it", what, r)
				}
			}()
			f()
		}()
	}
}

// A world given bounds by name runs its proxy under them, over the
// compressed rest; a name mcplocal has no knob for is refused, not dropped.
func TestAWorldRunsUnderTheBoundsItIsGiven(t *testing.T) {
	ctx := context.Background()
	e, err := NewEnv(ctx, EnvOptions{Bounds: map[string]int64{BoundSessions: 5, BoundRequest: 2100}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	kv := e.Target.(*InProcess).Proxy().Knobs()
	if kv.SessionsMax != 5 || kv.RequestDeadline != 2100*time.Millisecond || kv.GateLLMTimeout != Compressed().GateLLMTimeout {
		t.Errorf("the proxy runs with sessions %d, request deadline %v, gate %v; want 5, 2.1s and the compressed %v",
			kv.SessionsMax, kv.RequestDeadline, kv.GateLLMTimeout, Compressed().GateLLMTimeout)
	}
	if got := e.Bounds().N(BoundSessions); got != 5 {
		t.Errorf("the world's bounds hold sessions %d, want 5", got)
	}
	if _, err := NewEnv(ctx, EnvOptions{Bounds: map[string]int64{"MCPCTL_NO_SUCH_MS": 1}}); err == nil || !strings.Contains(err.Error(), "MCPCTL_NO_SUCH_MS") {
		t.Errorf("an unknown bound: %v, want an error naming it", err)
	}
}
