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

// openStallable opens a stallable store over a SQLite file of the test's,
// closed when the test ends, and the switch that stalls it.
func openStallable(t *testing.T) (context.Context, audit.Store, *atomic.Bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	w := &world.World{Store: "sqlite:" + filepath.Join(t.TempDir(), "audit.db")}
	stalled := new(atomic.Bool)
	store, err := OpenStallable(ctx, w, stalled.Load)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return ctx, store, stalled
}

// The in-process target's store answers until it is stalled, then every
// call waits for its context; it stays a BatchWriter, and "memory" leaves
// the proxy to make its own.
func TestAStallableStoreStallsWhenTold(t *testing.T) {
	ctx, store, stalled := openStallable(t)
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

// stallAll runs every call of the store under a short context while it is
// stalled: each must wait for its context and end with its deadline.
func stallAll(t *testing.T, ctx context.Context, store audit.Store) {
	t.Helper()
	rec := audit.SessionRecord{Project: "docmost", ID: "S2", Owner: "alice", Created: t0}
	calls := map[string]func(context.Context) error{
		"write": func(c context.Context) error {
			return store.Write(c, audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: "STALLED", Start: t0})
		},
		"writeBatch": func(c context.Context) error {
			return store.(audit.BatchWriter).WriteBatch(c, []audit.Row{{CorrelationID: "STALLED", Start: t0}})
		},
		"query":  func(c context.Context) error { _, err := store.Query(c, audit.Filter{}); return err },
		"claim":  func(c context.Context) error { _, err := store.ClaimSession(c, rec); return err },
		"lookup": func(c context.Context) error { _, err := store.LookupSession(c, "S1"); return err },
		"close": func(c context.Context) error {
			return store.CloseSession(c, audit.SessionRecord{Project: "docmost", ID: "S1", Closed: t0})
		},
		"prune": func(c context.Context) error { _, err := store.PruneSessions(c, t0.Add(time.Hour)); return err },
	}
	for name, call := range calls {
		cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := call(cctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s on a stalled store: %v; want it to wait for its context", name, err)
		}
	}
}

// Until it is stalled the store is the world's own: rows written one by
// one and in a batch are read back, a session is claimed, looked up and
// closed. Stalled, no call reaches the store: once the stall ends, nothing a
// stalled call carried is there.
func TestAStallableStoreIsTheWorldsStoreUntilStalled(t *testing.T) {
	ctx, store, stalled := openStallable(t)
	if err := store.Write(ctx, audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: "T1", SpanID: "a", Start: at(0)}); err != nil {
		t.Fatal(err)
	}
	if err := store.(audit.BatchWriter).WriteBatch(ctx, []audit.Row{
		{Kind: audit.KindUpstreamCall, CorrelationID: "T1", SpanID: "b", ParentID: "a", Start: at(1)},
		{Kind: audit.KindUpstreamCall, CorrelationID: "T1", SpanID: "c", ParentID: "a", Start: at(2)},
	}); err != nil {
		t.Fatal(err)
	}
	rows, err := store.Query(ctx, audit.Filter{Trace: "T1"})
	if err != nil || len(rows) != 3 || rows[0].SpanID != "a" || rows[2].SpanID != "c" {
		t.Fatalf("rows of T1: %+v, %v; want a, b and c", rows, err)
	}
	rec := audit.SessionRecord{Project: "docmost", ID: "S1", Owner: "alice", Created: t0}
	if got, err := store.ClaimSession(ctx, rec); err != nil || got.Owner != "alice" {
		t.Fatalf("claim: %+v, %v", got, err)
	}
	if recs, err := store.LookupSession(ctx, "S1"); err != nil || len(recs) != 1 || recs[0].Owner != "alice" || recs[0].Tombstone() {
		t.Fatalf("lookup of an open session: %+v, %v", recs, err)
	}

	stalled.Store(true)
	stallAll(t, ctx, store)
	stalled.Store(false)

	if rows, err := store.Query(ctx, audit.Filter{Trace: "STALLED"}); err != nil || len(rows) != 0 {
		t.Errorf("rows written while stalled: %+v, %v; want none", rows, err)
	}
	if recs, err := store.LookupSession(ctx, "S2"); err != nil || len(recs) != 0 {
		t.Errorf("a claim made while stalled holds: %+v, %v", recs, err)
	}
	if recs, err := store.LookupSession(ctx, "S1"); err != nil || len(recs) != 1 || recs[0].Tombstone() {
		t.Errorf("a close or a prune made while stalled holds: %+v, %v", recs, err)
	}
	if err := store.CloseSession(ctx, audit.SessionRecord{Project: "docmost", ID: "S1", Owner: "alice", Closed: t0.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if recs, err := store.LookupSession(ctx, "S1"); err != nil || len(recs) != 1 || !recs[0].Tombstone() {
		t.Errorf("after CloseSession: %+v, %v; want a tombstone", recs, err)
	}
}

// Over a store that writes no batches of its own, WriteBatch writes the
// rows one by one, and stops at the first the store refuses.
func TestAStallableStoreBatchesOverAStoreWithout(t *testing.T) {
	ctx := context.Background()
	mem := audit.NewMemory()
	store := &stallStore{Store: mem, stalled: func() bool { return false }}
	if err := store.WriteBatch(ctx, []audit.Row{{CorrelationID: "T1", Start: at(0)}, {CorrelationID: "T1", Start: at(1)}}); err != nil {
		t.Fatal(err)
	}
	if mem.Len() != 2 {
		t.Errorf("the store holds %d rows, want the batch's 2", mem.Len())
	}
	_ = mem.Close()
	if err := store.WriteBatch(ctx, []audit.Row{{CorrelationID: "T2", Start: at(2)}}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("a batch to a closed store: %v, want audit.ErrClosed", err)
	}
}

// Close closes the store it wraps, and may be called again (the proxy
// closes it, and so does a target whose proxy failed to start).
func TestAStallableStoreClosesTheStoreOnce(t *testing.T) {
	ctx := context.Background()
	store, err := OpenStallable(ctx, &world.World{Store: "sqlite:" + filepath.Join(t.TempDir(), "audit.db")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Errorf("a second close: %v", err)
	}
	if _, err := store.Query(ctx, audit.Filter{}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("a query after Close: %v, want audit.ErrClosed", err)
	}
}
