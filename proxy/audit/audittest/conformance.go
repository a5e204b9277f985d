// Package audittest holds test helpers for audit.Store implementations: one
// conformance suite every store must pass, ready-made backends for SQLite,
// PostgreSQL and Memory, and StartPostgres, which runs a throwaway PostgreSQL
// server for a test process.
package audittest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// Backend describes one Store implementation to RunStoreConformance.
type Backend struct {
	// Name labels the backend in failures.
	Name string
	// NewDSN returns the DSN of a fresh, empty store location; opening it
	// with audit.Open twice must reach the same data. Nil for stores
	// without a DSN (Memory); then NewStore must be set.
	NewDSN func(t testing.TB) string
	// NewStore opens a fresh, empty store. Optional when NewDSN is set (the
	// suite then uses audit.Open(NewDSN(t))).
	NewStore func(t testing.TB) audit.Store
	// IndexDefs returns the definitions of the indexes on audit.Table of the
	// store at dsn, read from the database's own catalogue (sqlite_master,
	// pg_indexes). Required when NewDSN is set.
	IndexDefs func(t testing.TB, dsn string) []string
}

const opTimeout = 20 * time.Second

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	t.Cleanup(cancel)
	return ctx
}

// open returns a fresh store (closed at cleanup) and its DSN ("" if none).
func (b Backend) open(t testing.TB) (audit.Store, string) {
	t.Helper()
	var (
		s   audit.Store
		dsn string
	)
	switch {
	case b.NewStore != nil:
		s = b.NewStore(t)
	case b.NewDSN != nil:
		dsn = b.NewDSN(t)
		var err error
		s, err = audit.Open(ctxFor(t), dsn)
		if err != nil {
			t.Fatalf("%s: Open(%q): %v", b.Name, dsn, err)
		}
	default:
		t.Fatalf("%s: Backend needs NewDSN or NewStore", b.Name)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dsn
}

// base is a start time with sub-microsecond noise stores must drop.
var base = time.Date(2026, 3, 14, 15, 9, 26, 535_897_932, time.FixedZone("CET", 3600))

// fullRow has every field set, to non-zero values.
func fullRow() audit.Row {
	return audit.Row{
		ID:             999, // ignored: the store assigns IDs
		Kind:           audit.KindStageExecution,
		CorrelationID:  "7K3M9QXZ",
		SpanID:         "span-stage-1",
		ParentID:       "span-pipeline-1",
		SessionID:      "sess-0f1e2d",
		User:           "alice",
		Project:        "docmost",
		Server:         "docmost",
		Tool:           "docmost_search",
		Stage:          "paginate",
		Start:          base,
		Duration:       1234567891 * time.Nanosecond,
		Status:         audit.StatusTimeout,
		Degraded:       true,
		DegradedReason: "LLM budget spent after 30000 ms",
		Detail:         "provider=vllm-current model=qwen3-32b; error: context deadline exceeded — ünïcödé ⚠ 'quotes' \"double\"",
		Bytes:          14321,
		Content:        "text:2,image:1,structured,isError",
	}
}

func write(t testing.TB, s audit.Store, rows ...audit.Row) {
	t.Helper()
	for _, r := range rows {
		if err := s.Write(ctxFor(t), r); err != nil {
			t.Fatalf("Write(%+v): %v", r, err)
		}
	}
}

func query(t testing.TB, s audit.Store, f audit.Filter) []audit.Row {
	t.Helper()
	rows, err := s.Query(ctxFor(t), f)
	if err != nil {
		t.Fatalf("Query(%+v): %v", f, err)
	}
	return rows
}

func spans(rows []audit.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.SpanID
	}
	return out
}

func wantSpans(t testing.TB, what string, rows []audit.Row, want ...string) {
	t.Helper()
	if got := spans(rows); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("%s: got spans %q, want %q", what, got, want)
	}
}

// sameRow compares two rows field by field, times with Equal.
func sameRow(t testing.TB, got, want audit.Row) {
	t.Helper()
	if !got.Start.Equal(want.Start) {
		t.Errorf("Start: got %s, want %s", got.Start.Format(time.RFC3339Nano), want.Start.Format(time.RFC3339Nano))
	}
	if got.Start.Location() != time.UTC {
		t.Errorf("Start location: got %s, want UTC", got.Start.Location())
	}
	got.Start, want.Start = time.Time{}, time.Time{}
	if got != want {
		t.Errorf("row mismatch:\n got  %+v\n want %+v", got, want)
	}
}

// RunStoreConformance runs the behaviour every audit.Store must have against
// b, as subtests of t.
func RunStoreConformance(t *testing.T, b Backend) {
	t.Run("RoundTripEveryField", func(t *testing.T) {
		s, _ := b.open(t)
		in := fullRow()
		write(t, s, in)
		rows := query(t, s, audit.Filter{Trace: in.CorrelationID})
		if len(rows) != 1 {
			t.Fatalf("got %d rows, want 1", len(rows))
		}
		want := in
		want.Start = base.Truncate(time.Microsecond).UTC()
		if rows[0].ID <= 0 {
			t.Errorf("ID: got %d, want a store-assigned positive ID", rows[0].ID)
		}
		want.ID = rows[0].ID
		sameRow(t, rows[0], want)

		// Zero values round-trip too (not degraded, no parent, zero time).
		zero := audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: "ZER0ZER0", SpanID: "root"}
		write(t, s, zero)
		rows = query(t, s, audit.Filter{Trace: "ZER0ZER0"})
		if len(rows) != 1 {
			t.Fatalf("zero row: got %d rows, want 1", len(rows))
		}
		if !rows[0].Start.IsZero() {
			t.Errorf("zero Start: got %s, want the zero time", rows[0].Start)
		}
		zero.ID = rows[0].ID
		zero.Start = time.Time{}.UTC()
		sameRow(t, rows[0], zero)

		// Every kind is accepted.
		for i, k := range audit.Kinds {
			write(t, s, audit.Row{Kind: k, CorrelationID: "KINDS000", SpanID: fmt.Sprint(i), Start: base.Add(time.Duration(i) * time.Second)})
		}
		rows = query(t, s, audit.Filter{Trace: "KINDS000"})
		if len(rows) != len(audit.Kinds) {
			t.Fatalf("kinds: got %d rows, want %d", len(rows), len(audit.Kinds))
		}
		for i, r := range rows {
			if r.Kind != audit.Kinds[i] {
				t.Errorf("kind %d: got %q, want %q", i, r.Kind, audit.Kinds[i])
			}
		}
	})

	t.Run("QueryByTraceAndSession", func(t *testing.T) {
		s, _ := b.open(t)
		row := func(trace, session, span string, at int) audit.Row {
			return audit.Row{Kind: audit.KindUpstreamCall, CorrelationID: trace, SessionID: session, SpanID: span,
				Start: base.Add(time.Duration(at) * time.Millisecond), Status: audit.StatusOK}
		}
		// Two requests in flight on one session, one on another session.
		write(t, s,
			row("AAAAAAAA", "s1", "a1", 0),
			row("BBBBBBBB", "s1", "b1", 1),
			row("AAAAAAAA", "s1", "a2", 2),
			row("CCCCCCCC", "s2", "c1", 3),
			row("BBBBBBBB", "s1", "b2", 4),
		)
		wantSpans(t, "trace A", query(t, s, audit.Filter{Trace: "AAAAAAAA"}), "a1", "a2")
		wantSpans(t, "trace B", query(t, s, audit.Filter{Trace: "BBBBBBBB"}), "b1", "b2")
		wantSpans(t, "session s1", query(t, s, audit.Filter{Session: "s1"}), "a1", "b1", "a2", "b2")
		wantSpans(t, "session s2", query(t, s, audit.Filter{Session: "s2"}), "c1")
		wantSpans(t, "trace A and session s1", query(t, s, audit.Filter{Trace: "AAAAAAAA", Session: "s1"}), "a1", "a2")
		wantSpans(t, "trace A and session s2", query(t, s, audit.Filter{Trace: "AAAAAAAA", Session: "s2"}))
		wantSpans(t, "unknown trace", query(t, s, audit.Filter{Trace: "ZZZZZZZZ"}))
		wantSpans(t, "no filter", query(t, s, audit.Filter{}), "a1", "b1", "a2", "c1", "b2")
		wantSpans(t, "session s1 limit 3", query(t, s, audit.Filter{Session: "s1", Limit: 3}), "a1", "b1", "a2")
		// Filters match exactly, not by prefix or pattern.
		wantSpans(t, "trace prefix", query(t, s, audit.Filter{Trace: "AAAA"}))
		wantSpans(t, "trace pattern", query(t, s, audit.Filter{Trace: "A%"}))
	})

	t.Run("OrderedByStartThenID", func(t *testing.T) {
		s, _ := b.open(t)
		// Written out of start order; t1 twice, so ID breaks the tie; the
		// nanosecond noise is below the kept precision, so t1 and t1+300ns tie.
		t0 := base
		t1 := base.Add(5 * time.Millisecond)
		write(t, s,
			audit.Row{Kind: audit.KindStageExecution, CorrelationID: "ORDER000", SpanID: "late", Start: base.Add(time.Second)},
			audit.Row{Kind: audit.KindStageExecution, CorrelationID: "ORDER000", SpanID: "tie-first", Start: t1},
			audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: "ORDER000", SpanID: "root", Start: t0},
			audit.Row{Kind: audit.KindStageExecution, CorrelationID: "ORDER000", SpanID: "tie-second", Start: t1.Add(300 * time.Nanosecond)},
			audit.Row{Kind: audit.KindStageExecution, CorrelationID: "ORDER000", SpanID: "other-zone", Start: t0.Add(2 * time.Millisecond).In(time.FixedZone("X", -7*3600))},
		)
		rows := query(t, s, audit.Filter{Trace: "ORDER000"})
		wantSpans(t, "order", rows, "root", "other-zone", "tie-first", "tie-second", "late")
		for i := 1; i < len(rows); i++ {
			if rows[i].Start.Equal(rows[i-1].Start) && rows[i].ID <= rows[i-1].ID {
				t.Errorf("rows %d and %d tie on Start but IDs are %d, %d", i-1, i, rows[i-1].ID, rows[i].ID)
			}
		}
	})

	t.Run("EmptyCorrelationIDIsStored", func(t *testing.T) {
		s, _ := b.open(t)
		write(t, s, audit.Row{Kind: audit.KindGateDecision, SessionID: "orphan-session", SpanID: "no-trace", Start: base, Status: audit.StatusRefused})
		rows := query(t, s, audit.Filter{Session: "orphan-session"})
		wantSpans(t, "session of row without trace", rows, "no-trace")
		if rows[0].CorrelationID != "" {
			t.Errorf("CorrelationID: got %q, want it kept empty", rows[0].CorrelationID)
		}
		wantSpans(t, "everything", query(t, s, audit.Filter{}), "no-trace")
	})

	t.Run("ConcurrentWrites", func(t *testing.T) {
		s, _ := b.open(t)
		const writers, each = 16, 25
		ctx := ctxFor(t)
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					err := s.Write(ctx, audit.Row{
						Kind: audit.KindLLMAttempt, CorrelationID: fmt.Sprintf("W%07d", w), SessionID: "shared",
						SpanID: fmt.Sprintf("%02d-%02d", w, i), Start: base.Add(time.Duration(i) * time.Millisecond),
					})
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("concurrent Write: %v", err)
		}
		all := query(t, s, audit.Filter{Session: "shared"})
		if len(all) != writers*each {
			t.Fatalf("got %d rows, want %d", len(all), writers*each)
		}
		ids := map[int64]bool{}
		for i, r := range all {
			if ids[r.ID] {
				t.Errorf("duplicate ID %d", r.ID)
			}
			ids[r.ID] = true
			if i > 0 && (r.Start.Before(all[i-1].Start) || r.Start.Equal(all[i-1].Start) && r.ID < all[i-1].ID) {
				t.Errorf("row %d out of order", i)
			}
		}
		for w := range writers {
			rows := query(t, s, audit.Filter{Trace: fmt.Sprintf("W%07d", w)})
			if len(rows) != each {
				t.Errorf("writer %d: got %d rows, want %d", w, len(rows), each)
			}
			for i, r := range rows {
				if want := fmt.Sprintf("%02d-%02d", w, i); r.SpanID != want {
					t.Errorf("writer %d row %d: span %q, want %q", w, i, r.SpanID, want)
				}
			}
		}
	})

	t.Run("ContextAndClose", func(t *testing.T) {
		s, _ := b.open(t)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Write(cancelled, fullRow()); err == nil {
			t.Errorf("Write with a cancelled context: got nil error")
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := s.Write(ctxFor(t), fullRow()); !errors.Is(err, audit.ErrClosed) {
			t.Errorf("Write after Close: got %v, want audit.ErrClosed", err)
		}
		if _, err := s.Query(ctxFor(t), audit.Filter{}); !errors.Is(err, audit.ErrClosed) {
			t.Errorf("Query after Close: got %v, want audit.ErrClosed", err)
		}
	})

	runSessionConformance(t, b)

	if b.NewDSN == nil {
		return
	}

	t.Run("ReopenKeepsRowsAndSchema", func(t *testing.T) {
		dsn := b.NewDSN(t)
		ctx := ctxFor(t)
		s1, err := audit.Open(ctx, dsn)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		write(t, s1, fullRow())
		if err := s1.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		// Several processes may start at once against one database.
		var wg sync.WaitGroup
		stores := make([]audit.Store, 3)
		errs := make([]error, len(stores))
		for i := range stores {
			wg.Go(func() { stores[i], errs[i] = audit.Open(ctx, dsn) })
		}
		wg.Wait()
		for i, s := range stores {
			if errs[i] != nil {
				t.Fatalf("re-Open %d: %v", i, errs[i])
			}
			t.Cleanup(func() { _ = s.Close() })
		}
		rows := query(t, stores[0], audit.Filter{Trace: fullRow().CorrelationID})
		if len(rows) != 1 {
			t.Fatalf("after re-open: got %d rows, want 1", len(rows))
		}
		write(t, stores[1], audit.Row{Kind: audit.KindToolCallTrace, CorrelationID: fullRow().CorrelationID, SpanID: "after-reopen", Start: base.Add(time.Hour)})
		rows = query(t, stores[2], audit.Filter{Trace: fullRow().CorrelationID})
		wantSpans(t, "after re-open write", rows, fullRow().SpanID, "after-reopen")
		if rows[1].ID <= rows[0].ID {
			t.Errorf("IDs after re-open: %d then %d, want increasing", rows[0].ID, rows[1].ID)
		}
		if n := len(b.IndexDefs(t, dsn)); n != 2 {
			t.Errorf("after re-opens: %d indexes on %s, want 2 (no duplicates)", n, audit.Table)
		}
	})

	t.Run("IndexesExist", func(t *testing.T) {
		s, dsn := b.open(t)
		_ = s
		defs := b.IndexDefs(t, dsn)
		for _, col := range []string{"correlation_id", "session_id"} {
			found := false
			for _, d := range defs {
				// The column must lead the index for lookups by it.
				if i := strings.Index(d, "("); i >= 0 && strings.HasPrefix(strings.TrimSpace(d[i+1:]), col) {
					found = true
				}
			}
			if !found {
				t.Errorf("no index on %s(%s ...); indexes: %q", audit.Table, col, defs)
			}
		}
	})
}
