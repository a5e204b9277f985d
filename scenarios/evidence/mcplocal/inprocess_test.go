package mcplocal

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/scenarios/world"
)

// The in-process target's store answers until it is stalled, then every
// call waits for its context; it stays a BatchWriter, and "memory" leaves
// the proxy to make its own.
func TestAStallableStoreStallsWhenTold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := &world.World{Store: "sqlite:" + filepath.Join(t.TempDir(), "audit.db")}
	var stalled atomic.Bool
	store, err := OpenStallable(ctx, w, stalled.Load)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.Query(ctx, audit.Filter{Limit: 1}); err != nil {
		t.Fatalf("query before the stall: %v", err)
	}
	stalled.Store(true)
	qctx, qcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer qcancel()
	if _, err := store.Query(qctx, audit.Filter{Limit: 1}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("query on a stalled store: %v; want it to wait for its context", err)
	}
	if _, ok := store.(audit.BatchWriter); !ok {
		t.Fatal("the stallable store is no BatchWriter: the recorder would commit row by row")
	}
	if s, err := OpenStallable(ctx, &world.World{Store: "memory"}, nil); s != nil || err != nil {
		t.Errorf("a memory store: %v, %v; want none (the proxy makes its own)", s, err)
	}
}
