package harness

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// TestInProcessStallsItsStoreAndKeepsItsLog: the in-process target's store
// answers until StallAudit, then every call waits for its context; and what
// the proxy logs is in Logs, and in Logger if set.
func TestInProcessStallsItsStoreAndKeepsItsLog(t *testing.T) {
	ctx := testCtx(t)
	w := &World{
		Store:    "sqlite:" + filepath.Join(t.TempDir(), "audit.db"),
		Projects: map[string]*WorldProject{"p": {Servers: map[string]*WorldServer{"s": {URL: "http://127.0.0.1:1/mcp"}}}},
	}
	ip := &InProcess{}
	ip.spec = Spec{World: w, Bounds: CompressedBounds()}
	store, err := ip.openStore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Query(ctx, audit.Filter{Limit: 1}); err != nil {
		t.Fatalf("query before the stall: %v", err)
	}
	ip.StallAudit()
	qctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := store.Query(qctx, audit.Filter{Limit: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("query on a stalled store: %v; want it to wait for its context", err)
	}
	if _, ok := store.(audit.BatchWriter); !ok {
		t.Fatal("the stallable store is no BatchWriter: the recorder would commit row by row")
	}
	var also strings.Builder
	ip.Logger = slog.New(slog.NewTextHandler(&also, nil))
	ip.logger().Error("handler panicked", "stack", "goroutine 1 [running]")
	for name, got := range map[string]string{"Logs": ip.Logs(), "Logger": also.String()} {
		if !strings.Contains(got, "handler panicked") || !strings.Contains(got, "goroutine 1 [running]") {
			t.Errorf("the proxy's log line is not in %s: %q", name, got)
		}
	}
}
