package catalogue

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// boundOf is the bound name a row's world sets, in its unit (0 if unset).
func boundOf(s Scenario, name string) int64 { return s.Env.Override[name] }

// The routing rows judge where each message goes, not a deadline: their
// worlds' request bound outlasts the upstream bound, so a call whose
// message went astray ends at the upstream bound and fails the row.
func TestTheRoutingRowsRequestBoundOutlastsTheUpstreams(t *testing.T) {
	rows := 0
	for _, s := range All() {
		if !s.HasLabel("routing") {
			continue
		}
		rows++
		up, req := boundOf(s, harness.BoundUpstreamCall), boundOf(s, harness.BoundRequest)
		if up <= 0 || req <= up {
			t.Errorf("%s: request bound %d ms, upstream bound %d ms: the request must outlast the upstream call", s.Name(), req, up)
		}
	}
	if rows == 0 {
		t.Fatal("no routing row")
	}
}

// Only the client's cancel may end the cancel rows' hung call within
// cancelReach: their worlds' request and upstream bounds are far past it.
func TestTheCancelRowsBoundsAreFarPastTheCancel(t *testing.T) {
	rows := 0
	for _, s := range All() {
		if !strings.Contains(s.Operation.Name, "a client's cancel naming a call") {
			continue
		}
		rows++
		for _, name := range []string{harness.BoundRequest, harness.BoundUpstreamCall} {
			if d := time.Duration(boundOf(s, name)) * time.Millisecond; d < 2*cancelReach {
				t.Errorf("%s: %s is %v, not far past the %v a cancel has to reach the call", s.Name(), name, d, cancelReach)
			}
		}
	}
	if rows != 2 {
		t.Errorf("%d cancel rows, want the relayed one and the other", rows)
	}
}

// The secrets rows of the chat API time a plain and a streamed chat turn:
// their budget gives each turn the chat bound.
func TestTheChatSecretsRowsBudgetTwoTurns(t *testing.T) {
	kv := harness.CompressedBounds()
	rows := 0
	for _, s := range All() {
		if !s.HasLabel("secrets") || !s.Env.LLMKeys {
			continue
		}
		rows++
		if got, want := s.Budget(kv), 2*kv.D(harness.BoundChat); got < want {
			t.Errorf("%s: budget %v, less than two chat turns (%v)", s.Name(), got, want)
		}
	}
	if rows == 0 {
		t.Fatal("no chat secrets row")
	}
}

// The session records are read from the world's SQLite store on the
// targets that use it, and from no other: a target whose store is
// elsewhere says it cannot be read, rather than reading nothing.
func TestSessionRecordsAreReadFromTheWorldsSQLiteStore(t *testing.T) {
	ctx := context.Background()
	sqlite := &harness.World{Store: "sqlite:" + filepath.Join(t.TempDir(), "audit.db")}
	recs, readable, err := sessionRecords(ctx, &harness.Env{Target: &harness.InProcess{}, World: sqlite}, "SID")
	if !readable || err != nil || len(recs) != 0 {
		t.Errorf("an in-process proxy's SQLite store: readable=%v, %d records, %v; want it read, empty", readable, len(recs), err)
	}
	for name, env := range map[string]*harness.Env{
		"a foreign proxy":            {Target: bare{}, World: sqlite},
		"a store that is not SQLite": {Target: &harness.InProcess{}, World: &harness.World{Store: "postgres://db/audit"}},
	} {
		if _, readable, err := sessionRecords(ctx, env, "SID"); readable || err != nil {
			t.Errorf("%s: readable=%v %v, want not readable", name, readable, err)
		}
	}
}
