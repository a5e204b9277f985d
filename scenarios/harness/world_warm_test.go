package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakellm "github.com/mcpchaos/mcpchaos/fakes/llm"
	"github.com/mcpchaos/mcpchaos/fakes/upstream"
)

// Reuse undoes what the last scenario's fault left (a hairpin, toxics, a
// downed link, the fakes' behaviours), clears the fault bookkeeping for the
// next seed, and finds the proxy ready with no session left open.
func TestReuseUndoesTheLastScenario(t *testing.T) {
	ctx := context.Background()
	e := newWorld(t, EnvOptions{LLM: true, Everything: true, Seed: 1})
	for _, f := range []Fault{IngressHairpin{Link: LinkLLM}, Latency{Ms: 50}, LinkDown{Link: LinkEverything}, ToolError{Tool: "search"},
		ToolHang{Tool: "echo", Server: LinkEverything}, HandshakeStall{}, LLMFault{Step: fakellm.Step{Kind: fakellm.NotFound}}} {
		if err := e.Arm(ctx, f); err != nil {
			t.Fatalf("arm %s: %v", f.Name(), err)
		}
	}
	if err := e.Arm(ctx, ProxyRestart{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Reuse(ctx, 99); err != nil {
		t.Fatal(err)
	}
	if e.Seed != 99 || e.pending != nil || !e.Struck() || len(e.closers) != 0 {
		t.Errorf("bookkeeping: seed %d pending %v struck %v closers %d", e.Seed, e.pending, e.Struck(), len(e.closers))
	}
	if got := toxicOn(t, e.DocmostLink, "latency"); len(got) != 0 {
		t.Errorf("a toxic is left: %v", got)
	}
	if refused(e.EverythingLink.Addr()) {
		t.Error("the downed link is not up again")
	}
	if e.Docmost.Behavior("search").Kind != upstream.OK || e.Everything.Behavior("echo").Kind != upstream.OK {
		t.Error("a fake keeps the last scenario's behaviour")
	}
	if p := e.LLM.Plans()[fakellm.AnyModel]; len(p.Steps) != 1 || p.Steps[0].Kind == fakellm.NotFound {
		t.Errorf("the LLM keeps the last scenario's plan %+v", p)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cs, err := SDKClient(cctx, e.ProjectURL(), "")
	if err != nil {
		t.Fatalf("the reused world does not serve (the handshake stall is left?): %v", err)
	}
	if res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: e.Tool("search"), Arguments: map[string]any{"query": "q"}}); err != nil || res.IsError {
		t.Errorf("a call in the reused world: %v %+v", err, res)
	}
	// A session left open is the last scenario's: the world is not reused.
	if err := e.Reuse(ctx, 100); err == nil || !strings.Contains(err.Error(), "1 sessions left open") {
		t.Errorf("reuse with a session open: %v", err)
	}
	_ = cs.Close()
}

// A fake still serving the last scenario's call keeps the world from being
// reused until it ends; a proxy that stopped is not ready.
func TestReuseWaitsForTheFakesAndTheProxy(t *testing.T) {
	ctx := context.Background()
	e := newWorld(t, EnvOptions{})
	e.Docmost.Set("search", upstream.Behavior{Kind: upstream.Hang})
	cctx, cancel := context.WithCancel(ctx)
	cs, err := SDKClient(ctx, e.Docmost.URL(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cs.CallTool(cctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "q"}})
	}()
	for deadline := time.Now().Add(5 * time.Second); e.Docmost.InFlight() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	short, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	err = e.Reuse(short, 2)
	stop()
	if err == nil || !strings.Contains(err.Error(), "still serve 1 calls") {
		t.Errorf("reuse while a fake serves a call: %v", err)
	}
	cancel()
	<-done
	for deadline := time.Now().Add(5 * time.Second); e.Docmost.InFlight() != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.Reuse(ctx, 3); err != nil {
		t.Errorf("reuse once the call ended: %v", err)
	}
	if err := e.Target.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.Reuse(ctx, 4); err == nil || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("reuse of a stopped proxy: %v", err)
	}
	if err := JudgedOn(&Live{MCP: "http://127.0.0.1:1/mcp"}, CompressedBounds()).Reuse(ctx, 5); err == nil || !strings.Contains(err.Error(), "no readiness probe") {
		t.Errorf("reuse on a target without a probe: %v", err)
	}
}
