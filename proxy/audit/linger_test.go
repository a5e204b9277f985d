package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// Rows that trickle in (one session's requests, two rows each, a few per
// millisecond) share a commit: the writer waits up to the batch wait
// (MCPCTL_AUDIT_BATCH_WAIT_MS) for more rows before it commits, instead of
// one commit per row — a third of mcplocal's CPU at 1 session was SQLite
// commits. Every row is still written, in order.
func TestRecorderGathersATrickleOfRowsIntoFewCommits(t *testing.T) {
	noLeaks(t)
	store := &slowStore{Memory: *audit.NewMemory()}
	const n = 200
	const wait = 20 * time.Millisecond
	rec := audit.NewRecorder(store, audit.WithBatchWait(wait))
	start := time.Now()
	for i := range n {
		rec.Record(row("TRICKLE0", i))
		time.Sleep(200 * time.Microsecond)
	}
	took := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := store.Query(ctx, audit.Filter{Trace: "TRICKLE0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n {
		t.Fatalf("%d rows stored, want %d", len(rows), n)
	}
	for i, r := range rows {
		if r.SpanID != row("", i).SpanID {
			t.Fatalf("row %d has span %s: rows out of order", i, r.SpanID)
		}
	}
	// One commit per wait window, at most, plus the Flush's; a loaded
	// machine stretching the trickle only lowers the count.
	if calls, most := store.calls.Load(), int64(took/wait)+2; calls > most {
		t.Errorf("%d commits for %d rows over %v; want at most %d (one per %v)", calls, n, took.Round(time.Millisecond), most, wait)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// Close during the wait does not wait it out: the rows are written at once.
func TestRecorderCloseEndsTheBatchWait(t *testing.T) {
	noLeaks(t)
	store := &slowStore{Memory: *audit.NewMemory()}
	rec := audit.NewRecorder(store, audit.WithBatchWait(10*time.Second))
	rec.Record(row("CLOSE000", 0))
	time.Sleep(20 * time.Millisecond) // the writer is waiting for more
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Close(ctx); err != nil || time.Since(start) > time.Second {
		t.Fatalf("Close: %v after %v; want the queued row written at once", err, time.Since(start))
	}
	if st := rec.Stats(); st.Written != 1 {
		t.Fatalf("stats %+v; want the row written", st)
	}
}
