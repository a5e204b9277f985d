package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/smoke"
)

// mcplocal's cluster shares the Postgres it starts: a call through HAProxy
// is ready by /readyz through the balancer, survives the store's restart,
// and its trace code is among the traces kept at Stop.
func TestAnMcplocalClusterKeepsTheTracesOfItsStore(t *testing.T) {
	c := &Cluster{Path: mcplocalBinary(t)} // built before the test's own time starts
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	c.Stderr = &syncWriter{w: &out}
	env := startForAlice(t, ctx, c, &out)
	if c.Name() != "cluster:2" {
		t.Errorf("name %q", c.Name())
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("ready: %v", err)
	}
	call := func() string {
		t.Helper()
		cs, err := SDKClient(ctx, env.ProjectURL(), env.Token("alice"))
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": "kept"}})
		if err != nil || res.IsError {
			t.Fatalf("err=%v result=%+v", err, res)
		}
		code, _ := res.Meta[smoke.TraceMetaKey].(string)
		return code
	}
	first := call()
	// Its row is in the store before the store restarts (a row still
	// queued then may be lost, as the proxy's audit says).
	for deadline := time.Now().Add(15 * time.Second); auditRows(ctx, t, c.ReplicaURL(0)+"/api/v1/audit?trace="+first, env.Token("alice")) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no audit row of %s", first)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.RestartStore(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.PartitionStore(1); err != nil {
		t.Fatal(err)
	}
	if err := c.HealStore(1); err != nil {
		t.Fatal(err)
	}
	var second string
	for deadline := time.Now().Add(30 * time.Second); second == "" && time.Now().Before(deadline); {
		if err := c.Ready(ctx); err == nil {
			second = call()
		} else {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if second == "" {
		t.Fatal("the cluster is not ready again after the store's restart")
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	kept, err := c.KeptTraces()
	if err != nil || !kept[first] || !kept[second] {
		t.Errorf("kept %d traces (%v), want %s and %s among them", len(kept), err, first, second)
	}
}
