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

// A world judged on bounds holds them.
func TestAWorldJudgedOnBoundsHoldsThem(t *testing.T) {
	b := CompressedBounds().With(BoundSessions, 7)
	if got := JudgedOn(&InProcess{}, b).Bounds().N(BoundSessions); got != 7 {
		t.Errorf("a world judged on bounds holds sessions %d, want 7", got)
	}
}

// A world given bounds by name runs its proxy under them, over the
// compressed rest; a name mcplocal has no knob for is refused, not dropped.
func TestAWorldRunsUnderTheBoundsItIsGiven(t *testing.T) {
	ctx := context.Background()
	e, err := NewEnv(ctx, EnvOptions{Override: map[string]int64{BoundSessions: 5, BoundRequest: 2100}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	kv := e.Target.(*InProcess).Proxy().Knobs()
	if kv.SessionsMax != 5 || kv.RequestDeadline != 2100*time.Millisecond || kv.GateLLMTimeout != CompressedBounds().D(BoundGate) {
		t.Errorf("the proxy runs with sessions %d, request deadline %v, gate %v; want 5, 2.1s and the compressed %v",
			kv.SessionsMax, kv.RequestDeadline, kv.GateLLMTimeout, CompressedBounds().D(BoundGate))
	}
	if got := e.Bounds().N(BoundSessions); got != 5 {
		t.Errorf("the world's bounds hold sessions %d, want 5", got)
	}
	if _, err := NewEnv(ctx, EnvOptions{Override: map[string]int64{"MCPCTL_NO_SUCH_MS": 1}}); err == nil || !strings.Contains(err.Error(), "MCPCTL_NO_SUCH_MS") {
		t.Errorf("an unknown bound: %v, want an error naming it", err)
	}
}
