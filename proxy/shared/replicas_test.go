package shared_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpchaos/mcpchaos/proxy/config"
)

const notice = "⚠ Session state unavailable"

// connect opens a session as the user of bal's token, through bal.
func connect(t *testing.T, bal *balancer, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "0"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bal}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls tool and returns its text; an isError result fails the test
// unless wantError.
func call(t *testing.T, cs *mcp.ClientSession, tool string, wantError bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError != wantError {
		t.Fatalf("tools/call %s: isError %v, want %v: %s", tool, res.IsError, wantError, text.String())
	}
	return text.String()
}

// TestASessionOpenedOnOneReplicaIsRecreatedOnAnotherForItsOwnerOnly: a
// session alice opened on replica A, whose requests then reach replica B,
// is recreated on B for alice with the one ⚠ notice; bob presenting its id
// on B is refused as on one proxy; B's rows are in the one audit trail
// that A reads.
func TestASessionOpenedOnOneReplicaIsRecreatedOnAnotherForItsOwnerOnly(t *testing.T) {
	a, b := newCluster(t, testKnobs())
	bal := newBalancer(a, aliceToken)
	cs := connect(t, bal, nil)
	if got := call(t, cs, "docmost_search", false); strings.Contains(got, notice) {
		t.Fatalf("the first call on A carries the recreation notice: %s", got)
	}
	id := cs.ID()
	if code, body := rawCall(t, b, bobToken, id); code != http.StatusNotFound {
		t.Fatalf("bob presenting alice's session id on B: %d %s, want 404", code, body)
	}
	bal.to(b)
	if got := call(t, cs, "docmost_search", false); !strings.Contains(got, notice) {
		t.Fatalf("alice's first call on B does not say the session was recreated: %s", got)
	}
	if got := call(t, cs, "docmost_search", false); strings.Contains(got, notice) {
		t.Fatalf("the notice came twice: %s", got)
	}
	if code, body := rawCall(t, b, bobToken, id); code != http.StatusNotFound {
		t.Fatalf("bob presenting alice's session id on B once it is live there: %d %s, want 404", code, body)
	}
	// B's rows (the recreation) in the trail A reads.
	if err := b.p.FlushAudit(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, body := api(t, a, http.MethodGet, "/api/v1/audit?session="+id, nil)
	if code != http.StatusOK || !strings.Contains(body, `"session_recreated"`) {
		t.Fatalf("A's audit API for the session: %d, want B's session_recreated row among: %s", code, body)
	}
}

// TestAToolsCallOnAnOpenSessionReadsNoSessionRecord: the hot path of a
// tools/call on an open session, on the replica that opened it and on the
// one that recreated it, makes no session record round trip to the shared
// store (owners and tombstones are read only for an id the replica does not
// hold).
func TestAToolsCallOnAnOpenSessionReadsNoSessionRecord(t *testing.T) {
	a, b := newCluster(t, testKnobs())
	bal := newBalancer(a, aliceToken)
	cs := connect(t, bal, nil)
	call(t, cs, "docmost_search", false)
	before := a.store.sessionCalls()
	for range 20 {
		call(t, cs, "docmost_search", false)
	}
	if n := a.store.sessionCalls() - before; n != 0 {
		t.Fatalf("20 tools/calls on an open session on A made %d session record round trips", n)
	}
	bal.to(b)
	call(t, cs, "docmost_search", false) // recreated: one lookup, one claim
	before = b.store.sessionCalls()
	for range 20 {
		call(t, cs, "docmost_search", false)
	}
	if n := b.store.sessionCalls() - before; n != 0 {
		t.Fatalf("20 tools/calls on the recreated session on B made %d session record round trips", n)
	}
}

// TestASessionDeletedOnOneReplicaIsATombstoneOnAnother: alice's session is
// live on both replicas (recreated on B); she DELETEs it through A. Within
// MCPCTL_SHARED_POLL_MS B holds it no more, and its id is refused there,
// as a DELETEd id is on one proxy.
func TestASessionDeletedOnOneReplicaIsATombstoneOnAnother(t *testing.T) {
	a, b := newCluster(t, testKnobs())
	bal := newBalancer(a, aliceToken)
	cs := connect(t, bal, nil)
	call(t, cs, "docmost_search", false)
	id := cs.ID()
	bal.to(b)
	call(t, cs, "docmost_search", false)
	if _, live := b.p.Sessions().Table("docmost").Get(id); !live {
		t.Fatal("the session is not live on B after its call there")
	}
	bal.to(a)
	if err := cs.Close(); err != nil {
		t.Fatalf("DELETE through A: %v", err)
	}
	within(t, "B forgets the session DELETEd through A", func() bool {
		_, live := b.p.Sessions().Table("docmost").Get(id)
		return !live
	})
	if code, body := rawCall(t, b, aliceToken, id); code != http.StatusNotFound {
		t.Fatalf("alice's DELETEd id on B: %d %s, want 404", code, body)
	}
}

// paused lists the projects replica r holds paused.
func paused(t *testing.T, r *replica) []string {
	t.Helper()
	code, body := api(t, r, http.MethodGet, "/api/v1/instances", nil)
	if code != http.StatusOK {
		t.Fatalf("instances: %d %s", code, body)
	}
	var v struct {
		Paused []struct {
			Project string `json:"project"`
		} `json:"paused"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("instances: %v: %s", err, body)
	}
	var out []string
	for _, p := range v.Paused {
		out = append(out, p.Project)
	}
	return out
}

// TestAPauseThroughOneReplicaHoldsTheProjectOnAll: mcpctl pause through A
// holds project docmost on B within MCPCTL_SHARED_POLL_MS (a call there
// waits, and is answered at MCPCTL_PAUSE_MAX_WAIT_MS); resume through B
// releases it on A.
func TestAPauseThroughOneReplicaHoldsTheProjectOnAll(t *testing.T) {
	k := testKnobs()
	k.PauseMaxWait = 300 * time.Millisecond
	a, b := newCluster(t, k)
	cs := connect(t, newBalancer(b, aliceToken), nil)
	if code, body := api(t, a, http.MethodPost, "/api/v1/projects/docmost/pause", nil); code != http.StatusOK {
		t.Fatalf("pause through A: %d %s", code, body)
	}
	within(t, "B holds docmost paused", func() bool { return slices.Contains(paused(t, b), "docmost") })
	if got := call(t, cs, "docmost_search", true); !strings.Contains(got, "paused") {
		t.Fatalf("a call on B while docmost is paused through A: %s", got)
	}
	if code, body := api(t, b, http.MethodPost, "/api/v1/projects/docmost/resume", nil); code != http.StatusOK {
		t.Fatalf("resume through B: %d %s", code, body)
	}
	within(t, "A resumes docmost", func() bool { return !slices.Contains(paused(t, a), "docmost") })
	call(t, cs, "docmost_search", false)
}

// toolNames lists the session's tools.
func toolNames(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// TestAServerChangedThroughOneReplicaReachesAll: a server created through
// A reaches a client connected to B (notifications/tools/list_changed,
// then its tools) within MCPCTL_SHARED_POLL_MS; deleted through B, it is
// gone from A.
func TestAServerChangedThroughOneReplicaReachesAll(t *testing.T) {
	a, b := newCluster(t, testKnobs())
	wiki := newUpstream(t, "lookup")
	changed := make(chan struct{}, 8)
	cs := connect(t, newBalancer(b, aliceToken), &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if got := toolNames(t, cs); strings.Contains(got, "wiki_") {
		t.Fatalf("tools before the create: %s", got)
	}
	spec := config.ServerSpec{Name: "wiki", Project: "docmost", URL: wiki}
	if code, body := api(t, a, http.MethodPost, "/api/v1/servers", spec); code != http.StatusCreated {
		t.Fatalf("create through A: %d %s", code, body)
	}
	select {
	case <-changed:
	case <-time.After(testPoll + slack):
		t.Fatal("no notifications/tools/list_changed on B's client after a create through A")
	}
	if got := toolNames(t, cs); !strings.Contains(got, "wiki_lookup") {
		t.Fatalf("B's tools after a create through A: %s", got)
	}
	call(t, cs, "wiki_lookup", false)
	if code, body := api(t, b, http.MethodDelete, "/api/v1/servers/docmost/wiki", nil); code != http.StatusOK {
		t.Fatalf("delete through B: %d %s", code, body)
	}
	within(t, "A forgets the server deleted through B", func() bool {
		_, body := api(t, a, http.MethodGet, "/api/v1/servers?project=docmost", nil)
		return !strings.Contains(body, `"wiki"`)
	})
}
