package audit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// gateStore holds every Write and WriteBatch until release is closed, and
// says how each store call was made: "write" for one row, "batch N" for N.
type gateStore struct {
	audit.Memory
	entered chan struct{} // one send per call that reached the gate
	release chan struct{}
	mu      sync.Mutex
	calls   []string
}

func newGateStore() *gateStore {
	return &gateStore{Memory: *audit.NewMemory(), entered: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g *gateStore) pass(ctx context.Context, call string) error {
	g.mu.Lock()
	g.calls = append(g.calls, call)
	g.mu.Unlock()
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gateStore) Write(ctx context.Context, r audit.Row) error {
	if err := g.pass(ctx, "write"); err != nil {
		return err
	}
	return g.Memory.Write(ctx, r)
}

func (g *gateStore) WriteBatch(ctx context.Context, rows []audit.Row) error {
	if err := g.pass(ctx, fmt.Sprintf("batch %d", len(rows))); err != nil {
		return err
	}
	for _, r := range rows {
		if err := g.Memory.Write(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

func (g *gateStore) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// waitEntered waits for the writer to reach the store.
func (g *gateStore) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not reach the store within 5 s")
	}
}

// TestRecorderBatchesHoldAtMostTheBatchSize: rows queued while the store is
// busy are written in batches of exactly the batch size (the rest in a last
// smaller one), every row once and in order, with or without a batch wait;
// a lone row is one Write, not a batch.
func TestRecorderBatchesHoldAtMostTheBatchSize(t *testing.T) {
	for _, wait := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("batch wait %v", wait), func(t *testing.T) {
			noLeaks(t)
			store := newGateStore()
			rec := audit.NewRecorder(store, audit.WithBatchSize(3), audit.WithQueueSize(100), audit.WithBatchWait(wait))
			defer rec.Close(context.Background())
			rec.Record(row("BATCHMAX", 0))
			// A batch wait holds row 0 until a Flush ends it; without one the
			// writer takes it at once, and a Flush begun here could queue its
			// marker among rows 1-10 and cut a batch short (seen: 1 run in 40).
			flushed := make(chan error, 1)
			if wait > 0 {
				go func() { flushed <- rec.Flush(ctx(t)) }()
			} else {
				flushed <- nil
			}
			store.waitEntered(t) // the writer holds row 0 alone; the rest queue up behind it
			for i := 1; i <= 10; i++ {
				rec.Record(row("BATCHMAX", i))
			}
			close(store.release)
			if err := <-flushed; err != nil {
				t.Fatal(err)
			}
			if err := rec.Flush(ctx(t)); err != nil {
				t.Fatal(err)
			}
			if got, want := store.Calls(), []string{"write", "batch 3", "batch 3", "batch 3", "write"}; !slices.Equal(got, want) {
				t.Errorf("store calls %q, want %q", got, want)
			}
			rows, err := store.Query(ctx(t), audit.Filter{Trace: "BATCHMAX"})
			if err != nil {
				t.Fatal(err)
			}
			var spans []string
			for _, r := range rows {
				spans = append(spans, r.SpanID)
			}
			if want := strings.Fields("0 1 2 3 4 5 6 7 8 9 10"); !slices.Equal(spans, want) {
				t.Errorf("stored spans %q, want %q", spans, want)
			}
			if st := rec.Stats(); st.Written != 11 || st.Dropped != 0 || st.Failed != 0 {
				t.Errorf("stats %+v, want 11 written", st)
			}
		})
	}
}

// refusingStore refuses every row, alone or in a batch, and counts the calls.
type refusingStore struct {
	audit.Memory
	calls atomic.Int64
}

func (s *refusingStore) Write(context.Context, audit.Row) error {
	s.calls.Add(1)
	return errors.New("row refused")
}

func (s *refusingStore) WriteBatch(context.Context, []audit.Row) error {
	s.calls.Add(1)
	return errors.New("batch refused")
}

// TestRecorderTriesALoneRefusedRowOnce: a lone row goes to the store in
// one Write; the batch path's retry row by row is for batches only, so a
// refused lone row is tried once.
func TestRecorderTriesALoneRefusedRowOnce(t *testing.T) {
	noLeaks(t)
	store := &refusingStore{Memory: *audit.NewMemory()}
	var logs syncBuffer
	rec := audit.NewRecorder(store, audit.WithLogger(logger(&logs)))
	defer rec.Close(context.Background())
	rec.Record(row("REFUSED1", 0))
	if err := rec.Flush(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if n, st := store.calls.Load(), rec.Stats(); n != 1 || st.Failed != 1 {
		t.Errorf("%d store calls, stats %+v; want 1 call, 1 failed", n, st)
	}
}

// TestRecorderWritesALoneRowWhenTheBatchWaitEnds: with a batch wait, a row
// no other row follows is written once the wait ends, without a Flush or a
// Close, and not before; then the next lone row likewise.
func TestRecorderWritesALoneRowWhenTheBatchWaitEnds(t *testing.T) {
	noLeaks(t)
	store := audit.NewMemory()
	const wait = 30 * time.Millisecond
	rec := audit.NewRecorder(store, audit.WithBatchWait(wait))
	defer rec.Close(context.Background())
	g := gomega.NewWithT(t)
	for i := range 2 {
		start := time.Now()
		rec.Record(row("LONEROW0", i))
		g.Eventually(store.Len).WithTimeout(5*time.Second).WithPolling(time.Millisecond).Should(gomega.Equal(i+1),
			"row %d not written within 5 s of its batch wait of %v", i, wait)
		if took := time.Since(start); took < wait {
			t.Errorf("row %d written after %v, before its batch wait of %v ended", i, took, wait)
		}
	}
}

// TestRecorderLogsADropAtOnce: a row dropped on the caller's goroutine (the
// queue full while the store is busy) is reported as soon as the writer is
// free, not held back until Close; and once reported, it is not reported
// again.
func TestRecorderLogsADropAtOnce(t *testing.T) {
	noLeaks(t)
	store := newGateStore()
	var logs syncBuffer
	rec := audit.NewRecorder(store, audit.WithQueueSize(1), audit.WithLogger(logger(&logs)), audit.WithLogInterval(time.Hour))
	defer rec.Close(context.Background())
	rec.Record(row("DROPLOG0", 0))
	store.waitEntered(t)           // the writer holds row 0
	rec.Record(row("DROPLOG0", 1)) // fills the queue
	rec.Record(row("DROPLOG0", 2)) // dropped
	if st := rec.Stats(); st.Dropped != 1 {
		t.Fatalf("stats %+v, want 1 dropped", st)
	}
	close(store.release)
	g := gomega.NewWithT(t)
	g.Eventually(func() []string { return lines(&logs) }).WithTimeout(5 * time.Second).Should(gomega.HaveLen(1))
	l := lines(&logs)[0]
	for _, want := range []string{"level=WARN", `msg="audit rows lost"`, "dropped=1 failed=0 droppedTotal=1 failedTotal=0 queueSize=1"} {
		if !strings.Contains(l, want) {
			t.Errorf("log line lacks %q: %s", want, l)
		}
	}
	// Close reports only what no report has counted yet: nothing here.
	if err := rec.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := lines(&logs); len(got) != 1 {
		t.Errorf("after Close, %d log lines, want the one:\n%s", len(got), logs.String())
	}
}

// failFirstStore fails its first Write, then holds each later one until
// release is closed.
type failFirstStore struct {
	audit.Memory
	calls   atomic.Int64
	entered chan struct{}
	release chan struct{}
}

func (s *failFirstStore) Write(ctx context.Context, r audit.Row) error {
	if s.calls.Add(1) == 1 {
		return errDiskOnFire
	}
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Memory.Write(ctx, r)
}

// TestRecorderReportNamesTheLastErrorOnlyWithNewFailures: a report of
// failures names the last error; a later report of drops alone does not
// repeat it.
func TestRecorderReportNamesTheLastErrorOnlyWithNewFailures(t *testing.T) {
	noLeaks(t)
	store := &failFirstStore{Memory: *audit.NewMemory(), entered: make(chan struct{}, 8), release: make(chan struct{})}
	var logs syncBuffer
	rec := audit.NewRecorder(store, audit.WithQueueSize(1), audit.WithLogger(logger(&logs)), audit.WithLogInterval(time.Hour))
	defer rec.Close(context.Background())
	rec.Record(row("LASTERR0", 0)) // fails: reported at once, with its error
	g := gomega.NewWithT(t)
	g.Eventually(func() []string { return lines(&logs) }).WithTimeout(5 * time.Second).Should(gomega.HaveLen(1))
	rec.Record(row("LASTERR0", 1))
	select { // the writer holds row 1
	case <-store.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not reach the store within 5 s")
	}
	rec.Record(row("LASTERR0", 2)) // fills the queue
	rec.Record(row("LASTERR0", 3)) // dropped: reported at Close, within the hour
	close(store.release)
	if err := rec.Close(ctx(t)); err != nil {
		t.Fatal(err)
	}
	got := lines(&logs)
	if len(got) != 2 {
		t.Fatalf("%d log lines, want 2:\n%s", len(got), logs.String())
	}
	if want := "dropped=0 failed=1 droppedTotal=0 failedTotal=1 queueSize=1 lastError=\"disk on fire\""; !strings.HasSuffix(got[0], want) {
		t.Errorf("first report %s\nwant it to end %s", got[0], want)
	}
	if want := "dropped=1 failed=0 droppedTotal=1 failedTotal=1 queueSize=1"; !strings.HasSuffix(got[1], want) {
		t.Errorf("second report %s\nwant it to end %s (no lastError: no new failure)", got[1], want)
	}
}
