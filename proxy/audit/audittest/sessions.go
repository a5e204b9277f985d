package audittest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
)

// runSessionConformance holds every store to the session-record contract:
// the first claim of (project, id) wins, tombstones are per project, survive
// a reopen, and expire with PruneSessions.
func runSessionConformance(t *testing.T, b Backend) {
	t.Run("SessionCallsHonourContextAndClose", func(t *testing.T) {
		s, _ := b.open(t)
		rec := audit.SessionRecord{Project: "p", ID: "S", Owner: "alice", Created: time.Now(), Closed: time.Now()}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		calls := func(ctx context.Context) map[string]error {
			_, claim := s.ClaimSession(ctx, rec)
			_, lookup := s.LookupSession(ctx, "S")
			_, prune := s.PruneSessions(ctx, time.Now())
			return map[string]error{"ClaimSession": claim, "CloseSession": s.CloseSession(ctx, rec), "LookupSession": lookup, "PruneSessions": prune}
		}
		for name, err := range calls(cancelled) {
			if err == nil {
				t.Errorf("%s with a cancelled context: got nil error", name)
			}
		}
		if recs, err := s.LookupSession(ctxFor(t), "S"); err != nil || len(recs) != 0 {
			t.Errorf("calls with a cancelled context stored %+v (%v)", recs, err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		for name, err := range calls(ctxFor(t)) {
			if err == nil {
				t.Errorf("%s after Close: got nil error", name)
			}
		}
	})
	t.Run("SessionClaimFirstWins", func(t *testing.T) {
		s, _ := b.open(t)
		ctx := ctxFor(t)
		alice := audit.SessionRecord{Project: "docs", ID: "S1", Owner: "alice", Created: base}
		got, err := s.ClaimSession(ctx, alice)
		if err != nil {
			t.Fatalf("ClaimSession: %v", err)
		}
		if got.Owner != "alice" || got.Tombstone() || !got.Created.Equal(base.Truncate(time.Microsecond)) {
			t.Fatalf("first claim: got %+v, want alice's open record", got)
		}
		bob := alice
		bob.Owner = "bob"
		got, err = s.ClaimSession(ctx, bob)
		if err != nil {
			t.Fatalf("second ClaimSession: %v", err)
		}
		if got.Owner != "alice" {
			t.Errorf("a second claim of the same (project, id) changed its owner to %q, want alice", got.Owner)
		}
		// The same id in another project is another record.
		other := audit.SessionRecord{Project: "wiki", ID: "S1", Owner: "bob", Created: base}
		if got, err = s.ClaimSession(ctx, other); err != nil || got.Owner != "bob" {
			t.Fatalf("claim in another project: %+v, %v; want bob's record", got, err)
		}
		recs, err := s.LookupSession(ctx, "S1")
		if err != nil {
			t.Fatalf("LookupSession: %v", err)
		}
		if len(recs) != 2 || recs[0].Project != "docs" || recs[0].Owner != "alice" || recs[1].Project != "wiki" || recs[1].Owner != "bob" {
			t.Errorf("LookupSession(S1) = %+v, want docs/alice then wiki/bob", recs)
		}
		if recs, err := s.LookupSession(ctx, "NEVER"); err != nil || len(recs) != 0 {
			t.Errorf("LookupSession(NEVER) = %+v, %v; want no records", recs, err)
		}
	})

	t.Run("SessionLookupInProjectOrder", func(t *testing.T) {
		s, _ := b.open(t)
		ctx := ctxFor(t)
		// Claimed in reverse order: the answer is by project name, whatever
		// order the store keeps them in.
		projects := []string{"e", "d", "c", "b", "a"}
		for _, p := range projects {
			if _, err := s.ClaimSession(ctx, audit.SessionRecord{Project: p, ID: "S5", Owner: "alice", Created: base}); err != nil {
				t.Fatalf("ClaimSession(%s): %v", p, err)
			}
		}
		recs, err := s.LookupSession(ctx, "S5")
		if err != nil {
			t.Fatalf("LookupSession: %v", err)
		}
		var got []string
		for _, r := range recs {
			got = append(got, r.Project)
		}
		if want := "a b c d e"; strings.Join(got, " ") != want {
			t.Errorf("LookupSession(S5) projects %q, want %q", got, want)
		}
	})

	t.Run("SessionClientKeptFromTheFirstClaim", func(t *testing.T) {
		s, _ := b.open(t)
		ctx := ctxFor(t)
		const hello = `{"capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}`
		rec := audit.SessionRecord{Project: "docs", ID: "S9", Owner: "alice", Created: base, Client: hello}
		if got, err := s.ClaimSession(ctx, rec); err != nil || got.Client != hello {
			t.Fatalf("ClaimSession = %+v, %v; want the record with its client", got, err)
		}
		again := rec
		again.Client = `{"capabilities":{},"clientInfo":{"name":"other","version":"0"}}`
		if got, err := s.ClaimSession(ctx, again); err != nil || got.Client != hello {
			t.Errorf("a second claim returned client %q, %v; want the first claim's", got.Client, err)
		}
		recs, err := s.LookupSession(ctx, "S9")
		if err != nil || len(recs) != 1 || recs[0].Client != hello {
			t.Errorf("LookupSession(S9) = %+v, %v; want the record with its client", recs, err)
		}
	})

	t.Run("SessionTombstonePerProject", func(t *testing.T) {
		s, _ := b.open(t)
		ctx := ctxFor(t)
		if _, err := s.ClaimSession(ctx, audit.SessionRecord{Project: "docs", ID: "S2", Owner: "alice", Created: base}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimSession(ctx, audit.SessionRecord{Project: "wiki", ID: "S2", Owner: "alice", Created: base}); err != nil {
			t.Fatal(err)
		}
		closed := base.Add(time.Minute)
		if err := s.CloseSession(ctx, audit.SessionRecord{Project: "docs", ID: "S2", Owner: "alice", Created: closed, Closed: closed}); err != nil {
			t.Fatalf("CloseSession: %v", err)
		}
		recs, err := s.LookupSession(ctx, "S2")
		if err != nil || len(recs) != 2 {
			t.Fatalf("LookupSession = %+v, %v; want two records", recs, err)
		}
		if !recs[0].Tombstone() || !recs[0].Closed.Equal(closed.Truncate(time.Microsecond)) || !recs[0].Created.Equal(base.Truncate(time.Microsecond)) {
			t.Errorf("docs record after CloseSession = %+v, want closed at %s, created kept at %s", recs[0], closed, base)
		}
		if recs[1].Tombstone() {
			t.Errorf("closing S2 in docs tombstoned it in wiki too: %+v", recs[1])
		}
		// A tombstone for a session the store never saw (opened before a restart
		// with a memory-only record) is created whole.
		if err := s.CloseSession(ctx, audit.SessionRecord{Project: "docs", ID: "S3", Owner: "carol", Created: closed, Closed: closed}); err != nil {
			t.Fatal(err)
		}
		if recs, _ := s.LookupSession(ctx, "S3"); len(recs) != 1 || !recs[0].Tombstone() || recs[0].Owner != "carol" {
			t.Errorf("LookupSession(S3) = %+v, want carol's tombstone", recs)
		}
	})

	t.Run("SessionPruneExpires", func(t *testing.T) {
		s, _ := b.open(t)
		ctx := ctxFor(t)
		old, recent := base, base.Add(time.Hour)
		mustClaim := func(id string, created time.Time) {
			if _, err := s.ClaimSession(ctx, audit.SessionRecord{Project: "p", ID: id, Owner: "u", Created: created}); err != nil {
				t.Fatal(err)
			}
		}
		mustClaim("open-old", old)
		mustClaim("open-new", recent)
		mustClaim("closed-recently", old)
		if err := s.CloseSession(ctx, audit.SessionRecord{Project: "p", ID: "closed-recently", Closed: recent}); err != nil {
			t.Fatal(err)
		}
		if err := s.CloseSession(ctx, audit.SessionRecord{Project: "p", ID: "closed-old", Created: old, Closed: old}); err != nil {
			t.Fatal(err)
		}
		n, err := s.PruneSessions(ctx, base.Add(time.Minute))
		if err != nil {
			t.Fatalf("PruneSessions: %v", err)
		}
		if n != 2 {
			t.Errorf("PruneSessions forgot %d records, want 2 (open-old, closed-old)", n)
		}
		for id, want := range map[string]int{"open-old": 0, "closed-old": 0, "open-new": 1, "closed-recently": 1} {
			if recs, _ := s.LookupSession(ctx, id); len(recs) != want {
				t.Errorf("after prune, %s has %d records, want %d (a tombstone expires from its close, not its creation)", id, len(recs), want)
			}
		}
	})

	if b.NewDSN == nil {
		return
	}
	t.Run("SessionRecordsSurviveReopen", func(t *testing.T) {
		dsn := b.NewDSN(t)
		ctx := ctxFor(t)
		s1, err := audit.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if err := s1.CloseSession(ctx, audit.SessionRecord{Project: "p", ID: "gone", Owner: "alice", Created: base, Closed: base}); err != nil {
			t.Fatal(err)
		}
		if _, err := s1.ClaimSession(ctx, audit.SessionRecord{Project: "p", ID: "mine", Owner: "alice", Created: base}); err != nil {
			t.Fatal(err)
		}
		_ = s1.Close()
		s2, err := audit.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s2.Close() })
		if recs, err := s2.LookupSession(ctx, "gone"); err != nil || len(recs) != 1 || !recs[0].Tombstone() {
			t.Errorf("after reopen, the tombstone of gone is %+v, %v", recs, err)
		}
		if got, err := s2.ClaimSession(ctx, audit.SessionRecord{Project: "p", ID: "mine", Owner: "bob", Created: base}); err != nil || got.Owner != "alice" {
			t.Errorf("after reopen, bob's claim of alice's id returned %+v, %v; want alice's record", got, err)
		}
	})
}
