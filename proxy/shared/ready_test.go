package shared_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// readyz answers replica r's GET /readyz.
func readyz(t *testing.T, r *replica) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(r.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAReplicaCutFromTheSharedStoreIsNotReadyAndStillAnswers: replica B
// loses its link to the shared PostgreSQL. Its /readyz says not ready, and
// why, within MCPCTL_SHARED_POLL_MS (a load balancer drains it); a call on
// a session open there is still answered within its budget, its rows
// failed and counted; a pause through B is refused (503), not held on B
// alone; when the link heals B is ready again.
func TestAReplicaCutFromTheSharedStoreIsNotReadyAndStillAnswers(t *testing.T) {
	k := testKnobs()
	k.ReadyTimeout, k.AuditWriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	dsn := sharedDSN(t)
	up := newUpstream(t, "search")
	link, cutDSN := newCut(t, dsn)
	a := newReplica(t, dsn, up, k)
	b := newReplica(t, cutDSN, up, k)
	within(t, "B is ready with its link up", func() bool { code, _ := readyz(t, b); return code == http.StatusOK })
	cs := connect(t, newBalancer(b, aliceToken), nil)
	call(t, cs, "docmost_search", false)

	link.cut()
	within(t, "B reports not ready, saying why", func() bool {
		code, body := readyz(t, b)
		return code == http.StatusServiceUnavailable && strings.Contains(body, `"auditStore"`)
	})
	start := time.Now()
	call(t, cs, "docmost_search", false)
	if took := time.Since(start); took > k.RequestDeadline {
		t.Fatalf("a call on B cut from the store took %v, past its deadline %v", took, k.RequestDeadline)
	}
	// A pause through B could not reach A: refused, and held nowhere.
	if code, body := api(t, b, http.MethodPost, "/api/v1/projects/docmost/pause", nil); code != http.StatusServiceUnavailable || !strings.Contains(body, "other replicas") {
		t.Fatalf("a pause through B cut from the store: %d %s, want 503 saying the other replicas would not see it", code, body)
	}
	if got := paused(t, b); len(got) != 0 {
		t.Fatalf("B holds %v paused after refusing the pause", got)
	}
	time.Sleep(testPoll * 3)
	if got := paused(t, a); len(got) != 0 {
		t.Fatalf("A holds %v paused after B refused the pause", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = b.p.FlushAudit(ctx)
	cancel()
	within(t, "B counts the rows it could not write", func() bool {
		st := b.p.AuditStats()
		return st.Failed+st.Dropped > 0
	})

	link.heal()
	within(t, "B is ready again once the link heals", func() bool { code, _ := readyz(t, b); return code == http.StatusOK })
}
