package mcplocal

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/health"
)

// apiGetter answers each API path with a JSON body, as mcplocal's API would.
type apiGetter struct {
	bodies map[string]any
	asked  []string
}

func (g *apiGetter) GetJSON(_ context.Context, path string, v any, _ *string) error {
	g.asked = append(g.asked, path)
	body, ok := g.bodies[path]
	if !ok {
		return errors.New("404 " + path)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Instance is the named server's health out of every server's; a server
// the proxy does not probe, or an API that does not answer, is the zero
// instance.
func TestInstanceIsTheNamedServers(t *testing.T) {
	ctx := context.Background()
	g := &apiGetter{bodies: map[string]any{"/api/v1/instances": map[string]any{"instances": []health.Instance{
		{Project: "docmost", Server: "docmost", Status: health.Status("up")},
		{Project: "docmost", Server: "wiki", Status: health.Status("down"), Failures: 3},
	}}}}
	if in := Instance(ctx, g, "wiki"); in.Server != "wiki" || in.Failures != 3 {
		t.Errorf("wiki's instance: %+v", in)
	}
	if in := Instance(ctx, g, "absent"); in != (health.Instance{}) {
		t.Errorf("a server nobody probes: %+v, want the zero instance", in)
	}
	if in := Instance(ctx, &apiGetter{}, "wiki"); in != (health.Instance{}) {
		t.Errorf("an API that did not answer: %+v, want the zero instance", in)
	}
}

// The adapter's spans of a trace, and of a session, are the audit API's
// rows for it, in tree order.
func TestEvidenceIsTheAuditAPIsRowsAsSpans(t *testing.T) {
	ctx := context.Background()
	rows := []audit.Row{
		{ID: 2, Kind: audit.KindUpstreamCall, CorrelationID: "7K3M9QXA", SpanID: "up", ParentID: "root", Server: "docmost", Start: at(5)},
		{ID: 1, Kind: audit.KindToolCallTrace, CorrelationID: "7K3M9QXA", SpanID: "root", Tool: "docmost_search", Start: at(0)},
	}
	g := &apiGetter{bodies: map[string]any{
		"/api/v1/audit?trace=7K3M9QXA":  map[string]any{"rows": rows},
		"/api/v1/audit?session=a+b%2Fc": map[string]any{"rows": rows},
	}}
	spans, err := Evidence{Of: g}.Spans(ctx, "7K3M9QXA")
	if err != nil || len(spans) != 2 || spans[0].ID != "root" || spans[1].ID != "up" || spans[1].Depth != 1 {
		t.Errorf("the trace's spans: %+v, %v; want root, then up under it", spans, err)
	}
	spans, err = SessionSpans(ctx, g, "a b/c")
	if err != nil || len(spans) != 2 || spans[0].ID != "root" {
		t.Errorf("the session's spans: %+v, %v (asked %v)", spans, err, g.asked)
	}
	if spans, err := (Evidence{Of: g}).Spans(ctx, "NOTKNOWN"); err == nil || spans != nil {
		t.Errorf("a target that could not be asked: %+v, %v; want an error", spans, err)
	}
	// A code is escaped as a session id is: one that is no valid trace
	// code cannot change the query it is asked in.
	g.asked = nil
	if _, err := Audit(ctx, g, "X&session=y#z"); err == nil || len(g.asked) != 1 || g.asked[0] != "/api/v1/audit?trace=X%26session%3Dy%23z" {
		t.Errorf("a code with query characters was asked as %v (%v)", g.asked, err)
	}
}

// SessionRecords reads a session's records from the world's store.
func TestSessionRecordsReadTheWorldsStore(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "audit.db")
	s, err := audit.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimSession(ctx, audit.SessionRecord{Project: "docmost", ID: "S1", Owner: "alice", Created: t0}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	recs, err := SessionRecords(ctx, dsn, "S1")
	if err != nil || len(recs) != 1 || recs[0].Owner != "alice" || recs[0].Project != "docmost" {
		t.Errorf("records of S1: %+v, %v; want alice's in docmost", recs, err)
	}
	if recs, err := SessionRecords(ctx, "nosuch:store", "S1"); err == nil {
		t.Errorf("a store that cannot be opened: %+v, want an error", recs)
	}
}
