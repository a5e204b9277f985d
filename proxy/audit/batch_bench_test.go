package audit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// BenchmarkSQLiteWriteBatch writes batches of 128 rows (what the writer
// gathers at 64 sessions: two rows per call) shaped like a relayed call's
// upstream_call and tool_call_trace rows, with a deadline on each batch as
// the recorder gives it.
func BenchmarkSQLiteWriteBatch(b *testing.B) {
	ctx := context.Background()
	s, err := audit.OpenSQLite(ctx, filepath.Join(b.TempDir(), "audit.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	batch := make([]audit.Row, 128)
	for i := range batch {
		kind := audit.KindToolCallTrace
		if i%2 == 0 {
			kind = audit.KindUpstreamCall
		}
		batch[i] = audit.Row{Kind: kind, CorrelationID: fmt.Sprintf("T%07d", i/2), SpanID: fmt.Sprintf("s%d", i),
			SessionID: fmt.Sprintf("session-%d", i%64), User: "alice", Project: "bench", Server: "up", Tool: "update_page",
			Start: time.Now(), Duration: time.Millisecond, Status: audit.StatusOK}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.WriteBatch(wctx, batch); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/row")
}
