package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/redact"
)

// TestRecorderRedactsSecrets: whatever a caller puts in a row's detail or
// degradedReason (an upstream's error quoting its URL, a DSN), the stored
// row carries no password and no URL query: the recorder is the last place
// a secret can be stopped before the audit trail, which users read.
func TestRecorderRedactsSecrets(t *testing.T) {
	store := audit.NewMemory()
	r := audit.NewRecorder(store)
	defer r.Close(context.Background())
	r.Record(audit.Row{Kind: audit.KindUpstreamCall, CorrelationID: "REDACT00", SpanID: "1", Start: time.Now(), Status: audit.StatusError,
		Detail:         `calling "http://docmost:3000/mcp?apikey=URLKEY-99": connection refused`,
		Degraded:       true,
		DegradedReason: "audit store postgres://mcp:PGPASS-77@db:5432/audit unreachable; host=db password=KVPASS-88"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := store.Query(ctx, audit.Filter{Trace: "REDACT00"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("rows %v, %v; want the one recorded", rows, err)
	}
	got := rows[0].Detail + " | " + rows[0].DegradedReason
	for _, secret := range []string{"URLKEY-99", "PGPASS-77", "KVPASS-88"} {
		if strings.Contains(got, secret) {
			t.Errorf("the stored row carries the secret %s: %s", secret, got)
		}
	}
	if strings.Count(got, redact.Mask) != 3 || !strings.Contains(got, "docmost:3000/mcp") {
		t.Errorf("the stored row should keep what is not secret and say where secrets were removed (3 times): %s", got)
	}
}
