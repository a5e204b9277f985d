package audit_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// slowStore costs perCall for every Write or WriteBatch, like a commit
// that waits for the disk, and counts the calls.
type slowStore struct {
	audit.Memory
	perCall time.Duration
	calls   atomic.Int64
}

func (s *slowStore) Write(ctx context.Context, r audit.Row) error {
	s.calls.Add(1)
	time.Sleep(s.perCall)
	return s.Memory.Write(ctx, r)
}

func (s *slowStore) WriteBatch(ctx context.Context, rows []audit.Row) error {
	s.calls.Add(1)
	time.Sleep(s.perCall)
	for _, r := range rows {
		if err := s.Memory.Write(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// A burst of rows costs a few commits, not one per row: under load the
// writer keeps up with the requests instead of filling its queue and
// dropping rows.
func TestRecorderWritesABurstInFewCommitsAndKeepsEveryRowInOrder(t *testing.T) {
	noLeaks(t)
	store := &slowStore{Memory: *audit.NewMemory(), perCall: time.Millisecond}
	const n = 2000
	rec := audit.NewRecorder(store, audit.WithBatchSize(256))
	for i := range n {
		rec.Record(row("BURST000", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	st := rec.Stats()
	if st.Written != n || st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("stats %+v, want all %d written", st, n)
	}
	rows, err := store.Query(ctx, audit.Filter{Trace: "BURST000"})
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
	if calls := store.calls.Load(); calls > n/10 {
		t.Errorf("%d store calls for %d rows: the writer commits row by row", calls, n)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Flush marker in the middle of a batch waits for the rows before it.
func TestRecorderFlushInsideABatchWaitsForEarlierRows(t *testing.T) {
	noLeaks(t)
	store := &slowStore{Memory: *audit.NewMemory(), perCall: 5 * time.Millisecond}
	rec := audit.NewRecorder(store, audit.WithBatchSize(64))
	defer rec.Close(context.Background())
	for i := range 100 {
		rec.Record(row("FLUSH000", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := store.Query(ctx, audit.Filter{Trace: "FLUSH000"})
	if len(rows) != 100 {
		t.Fatalf("after Flush %d rows stored, want 100", len(rows))
	}
}

func TestSQLiteWriteBatchStoresEveryRowWithIncreasingIDs(t *testing.T) {
	ctx := context.Background()
	s, err := audit.OpenSQLite(ctx, filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var batch []audit.Row
	for i := range 300 {
		batch = append(batch, row("SQLBATCH", i))
	}
	if err := s.WriteBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Query(ctx, audit.Filter{Trace: "SQLBATCH"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(batch) {
		t.Fatalf("%d rows stored, want %d", len(rows), len(batch))
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].ID <= rows[i-1].ID || rows[i].SpanID != batch[i].SpanID {
			t.Fatalf("row %d: id %d after %d, span %s want %s", i, rows[i].ID, rows[i-1].ID, rows[i].SpanID, batch[i].SpanID)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.WriteBatch(cancelled, batch[:2]); err == nil {
		t.Error("WriteBatch with a cancelled context succeeded")
	}
	if rows, _ := s.Query(ctx, audit.Filter{Trace: "SQLBATCH"}); len(rows) != len(batch) {
		t.Errorf("a failed batch left %d rows, want %d: a batch is all or nothing", len(rows), len(batch))
	}
}

// rowCostStore costs perRow for every row it stores, in Write and WriteBatch
// alike, and honours the write's context.
type rowCostStore struct {
	audit.Memory
	perRow time.Duration
}

func (s *rowCostStore) Write(ctx context.Context, r audit.Row) error {
	return s.WriteBatch(ctx, []audit.Row{r})
}

func (s *rowCostStore) WriteBatch(ctx context.Context, rows []audit.Row) error {
	select {
	case <-time.After(time.Duration(len(rows)) * s.perRow):
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, r := range rows {
		if err := s.Memory.Write(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// The write timeout bounds the write of one row (MCPCTL_AUDIT_WRITE_TIMEOUT_MS):
// a batch of n rows that each fit in it must not fail as a whole because n of
// them together do not.
func TestRecorderBatchGetsTheWriteTimeoutOfEachOfItsRows(t *testing.T) {
	noLeaks(t)
	store := &rowCostStore{Memory: *audit.NewMemory(), perRow: 2 * time.Millisecond}
	rec := audit.NewRecorder(store, audit.WithBatchSize(100), audit.WithWriteTimeout(20*time.Millisecond))
	for i := range 100 {
		rec.Record(row("ROWCOST0", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := rec.Stats(); st.Written != 100 || st.Failed != 0 {
		t.Fatalf("stats %+v: a batch of rows that each fit the write timeout failed as a whole", st)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// batchRefusingStore fails every WriteBatch (say, one row of it is refused)
// but takes rows one by one.
type batchRefusingStore struct{ audit.Memory }

func (*batchRefusingStore) WriteBatch(context.Context, []audit.Row) error {
	return errors.New("constraint failed on one row")
}

// A batch that fails for a reason other than time is retried row by row,
// so one bad row does not take the others with it.
func TestRecorderRetriesAFailedBatchRowByRow(t *testing.T) {
	noLeaks(t)
	store := &batchRefusingStore{Memory: *audit.NewMemory()}
	rec := audit.NewRecorder(store)
	for i := range 50 {
		rec.Record(row("REFUSED0", i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := rec.Stats(); st.Written != 50 || st.Failed != 0 {
		t.Errorf("stats %+v: rows lost with a refused batch", st)
	}
	if err := rec.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
