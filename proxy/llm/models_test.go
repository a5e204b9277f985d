package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

type listedModel struct{ id, created string }

// catalogue is listed in this order, three per page, so three pages. The
// newest of each family is on the last page, and its id loses every string
// comparison: claude-sonnet-9-1 > claude-sonnet-10 lexically, and
// claude-opus-4-5-20251101 is the longest, most "specific" opus id.
var catalogue = []listedModel{
	{"claude-opus-4-5", "2025-11-24T00:00:00Z"},
	{"claude-sonnet-9-1", "2026-09-01T00:00:00Z"},
	{"claude-3-opus-20240229", "2024-02-29T00:00:00Z"}, // old naming: not the opus family
	{"claude-opusplus-9", "2027-06-01T00:00:00Z"},      // another family that shares the prefix
	{"claude-opus-4-5-20251101", "2025-11-01T00:00:00Z"},
	{"claude-sonnet-4-5", "2025-09-29T00:00:00Z"},
	{"claude-opus-5", "2026-05-12T09:30:00.5Z"},
	{"claude-sonnet-10", "2027-02-01T00:00:00Z"},
	{"claude-haiku-4-5", "2025-10-01T00:00:00Z"},
}

// pager serves a model list the way GET /v1/models does (after_id, has_more,
// first_id, last_id), three models a page whatever the limit asks for, and
// records the after_id of each request.
type pager struct {
	mu     sync.Mutex
	list   []listedModel
	afters []string
	limits []string
	fail   atomic.Int32 // when non-zero, answer with this status
}

func (p *pager) handler(w http.ResponseWriter, r *http.Request) {
	if code := p.fail.Load(); code != 0 {
		http.Error(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`, int(code))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	after := r.URL.Query().Get("after_id")
	p.afters = append(p.afters, after)
	p.limits = append(p.limits, r.URL.Query().Get("limit"))
	start := 0
	if after != "" {
		start = slices.IndexFunc(p.list, func(m listedModel) bool { return m.id == after }) + 1
	}
	end := min(start+3, len(p.list))
	var data []map[string]string
	for _, m := range p.list[start:end] {
		data = append(data, map[string]string{"id": m.id, "created_at": m.created, "display_name": m.id, "type": "model"})
	}
	out := map[string]any{"data": data, "has_more": end < len(p.list), "first_id": nil, "last_id": nil}
	if len(data) > 0 {
		out["first_id"], out["last_id"] = data[0]["id"], data[len(data)-1]["id"]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (p *pager) seen() (afters, limits []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.afters), slices.Clone(p.limits)
}

func TestAutoFollowPicksNewestByCreatedAt(t *testing.T) {
	noLeaks(t)
	for _, tc := range []struct{ alias, want string }{
		{"claude-opus-latest", "claude-opus-5"},
		{"claude-sonnet-latest", "claude-sonnet-10"},
		{"claude-haiku-latest", "claude-haiku-4-5"},
	} {
		t.Run(tc.alias, func(t *testing.T) {
			pg := &pager{list: catalogue}
			s := newStub(t, answer("ok"))
			s.models = pg.handler
			ad := newAdapter(t, chainOf(anthropicCfg("ant", s, tc.alias)), knobs.Defaults())

			resp, err := ad.Complete(context.Background(), hello)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, body := s.last(); body["model"] != tc.want {
				t.Errorf("%s resolved to %v, want %s (newest by created_at)", tc.alias, body["model"], tc.want)
			}
			if resp.Model != tc.want || resp.Attempts[0].Model != tc.want {
				t.Errorf("response model %q / attempt model %q, want %s", resp.Model, resp.Attempts[0].Model, tc.want)
			}
			afters, limits := pg.seen()
			if !slices.Equal(afters, []string{"", "claude-3-opus-20240229", "claude-sonnet-4-5"}) {
				t.Errorf("pages requested with after_id %q, want the three pages in order", afters)
			}
			for _, l := range limits {
				if n, err := strconv.Atoi(l); err != nil || n <= 0 {
					t.Errorf("limit=%q, want a positive page size", l)
				}
			}
		})
	}
}

func TestAutoFollowIsCachedAndRefreshedLazily(t *testing.T) {
	noLeaks(t)
	pg := &pager{list: catalogue}
	s := newStub(t, answer("ok"))
	s.models = pg.handler
	var clock atomic.Int64
	clock.Store(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults(),
		WithModelRefresh(time.Minute), withClock(now))

	// Concurrent first calls share one resolution.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := ad.Complete(context.Background(), hello); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.modelHits.Load(); n != 3 {
		t.Fatalf("/v1/models hits after 8 concurrent calls = %d, want 3 (one resolution of 3 pages)", n)
	}

	clock.Add(int64(59 * time.Second))
	if _, err := ad.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if n := s.modelHits.Load(); n != 3 {
		t.Errorf("/v1/models hits within the refresh interval = %d, want still 3 (cached)", n)
	}

	clock.Add(int64(2 * time.Second)) // past the 1-minute refresh
	if _, err := ad.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if n := s.modelHits.Load(); n != 6 {
		t.Errorf("/v1/models hits after the refresh interval = %d, want 6 (resolved again, lazily)", n)
	}

	// A failed refresh keeps serving the last resolution.
	pg.fail.Store(500)
	clock.Add(int64(2 * time.Minute))
	resp, err := ad.Complete(context.Background(), hello)
	if err != nil || resp.Model != "claude-opus-5" {
		t.Errorf("failed refresh: %+v, %v; want the cached claude-opus-5", resp, err)
	}
	if n := s.modelHits.Load(); n != 7 {
		t.Errorf("/v1/models hits = %d, want 7 (one failed refresh)", n)
	}
}

// The resolved model answering 404 drops the cached resolution.
func TestAutoFollow404ForgetsTheResolution(t *testing.T) {
	noLeaks(t)
	pg := &pager{list: catalogue}
	s := newStub(t, raw(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-opus-5"}}`))
	s.models = pg.handler
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults())

	for i := 1; i <= 2; i++ {
		_, err := ad.Complete(context.Background(), hello)
		ce := chainErr(t, err)
		if at := ce.Attempts[0]; at.Status != 404 || at.Model != "claude-opus-5" {
			t.Errorf("call %d: attempt %+v, want 404 naming claude-opus-5", i, at)
		}
		if n := s.modelHits.Load(); n != int32(3*i) {
			t.Errorf("call %d: /v1/models hits %d, want %d (re-resolved after the 404)", i, n, 3*i)
		}
	}
}

// Resolving runs inside the attempt, so inside the budget: a hanging
// /v1/models costs one attempt cap and the chain fails over.
func TestAutoFollowResolutionIsInsideTheBudget(t *testing.T) {
	noLeaks(t)
	s := newStub(t, answer("never"))
	s.models = func(w http.ResponseWriter, r *http.Request) { hang(s, w, r, nil) }
	fb := newStub(t, answer("fallback"))
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-sonnet-latest", "fb"), openaiCfg("fb", fb, "qwen")),
		knobsWith(time.Second, 200*time.Millisecond))

	w := startWatch()
	resp, err := ad.Complete(context.Background(), hello)
	betweenTimed(t, "Complete with a hanging /v1/models (attempt cap 200ms)", w.end(), 200*time.Millisecond, 200*time.Millisecond+tolerance)
	if err != nil || resp.Provider != "fb" || !resp.FailedOver {
		t.Fatalf("want an answer from fb, got %+v, %v", resp, err)
	}
	if at := resp.Attempts[0]; at.Model != "claude-sonnet-latest" || at.Outcome != OutcomeTimeout {
		t.Errorf("attempt 1 = %+v, want the alias and a timeout", at)
	}
	if s.hits.Load() != 0 {
		t.Errorf("no /v1/messages call without a resolved model, got %d", s.hits.Load())
	}
}

func TestAutoFollowFailures(t *testing.T) {
	endless := func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("after_id"))
		id := strconv.Itoa(n + 1)
		fmt.Fprintf(w, `{"data":[{"id":%q,"created_at":"2025-01-01T00:00:00Z","type":"model"}],"has_more":true,"first_id":%q,"last_id":%q}`, id, id, id)
	}
	stuck := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[],"has_more":true,"first_id":null,"last_id":null}`)
	}
	// The same page again and again: its last_id names no new place.
	same := func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":"claude-opus-1","created_at":"2025-01-01T00:00:00Z","type":"model"}],"has_more":true,"first_id":"claude-opus-1","last_id":"claude-opus-1"}`)
	}
	noFamily := (&pager{list: catalogue[:3]}).handler
	for _, tc := range []struct {
		name      string
		alias     string
		models    http.HandlerFunc
		status    int
		outcome   Outcome
		wantHits  int32
		inDetail  string
		inExcerpt string
	}{
		{"endless pages are bounded", "claude-opus-latest", endless, 0, OutcomeUnresolved, maxModelPages, "after 20 pages", ""},
		{"has_more without last_id", "claude-opus-latest", stuck, 200, OutcomeInvalid, 1, "has_more without a new last_id", ""},
		{"has_more with the same last_id again", "claude-opus-latest", same, 200, OutcomeInvalid, 2, "has_more without a new last_id", ""},
		{"no family member", "claude-haiku-latest", noFamily, 0, OutcomeUnresolved, 1, "starts with claude-haiku-", ""},
		{"models endpoint 401", "claude-opus-latest", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, 401)
		}, 401, OutcomeStatus, 1, "authentication_error", "invalid x-api-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			s := newStub(t, answer("never"))
			s.models = tc.models
			fb := newStub(t, answer("fallback"))
			ad := newAdapter(t, chainOf(anthropicCfg("ant", s, tc.alias, "fb"), openaiCfg("fb", fb, "qwen")), knobs.Defaults())
			resp, err := ad.Complete(context.Background(), hello)
			if err != nil || resp.Provider != "fb" {
				t.Fatalf("want fail-over to fb, got %+v, %v", resp, err)
			}
			at := resp.Attempts[0]
			if at.Model != tc.alias || at.Outcome != tc.outcome || at.Status != tc.status {
				t.Errorf("attempt 1 = %+v, want %s %s status %d", at, tc.alias, tc.outcome, tc.status)
			}
			if !strings.Contains(at.Detail, tc.inDetail) || !strings.Contains(at.Excerpt, tc.inExcerpt) {
				t.Errorf("attempt 1 detail %q excerpt %q, want %q / %q", at.Detail, at.Excerpt, tc.inDetail, tc.inExcerpt)
			}
			if n := s.modelHits.Load(); n != tc.wantHits {
				t.Errorf("/v1/models hits %d, want %d", n, tc.wantHits)
			}
		})
	}
}

func TestFamilyRule(t *testing.T) {
	for _, tc := range []struct {
		model, prefix string
		follow        bool
	}{
		{"claude-sonnet-latest", "claude-sonnet", true},
		{"claude-opus-latest", "claude-opus", true},
		{"claude-3-5-sonnet-latest", "claude-3-5-sonnet", true},
		{"claude-sonnet-4-5", "", false},
		{"claude-latest", "", false},
		{"gpt-4o-latest", "", false},
	} {
		prefix, ok := followFamily(tc.model)
		if prefix != tc.prefix || ok != tc.follow {
			t.Errorf("followFamily(%q) = %q, %v; want %q, %v", tc.model, prefix, ok, tc.prefix, tc.follow)
		}
	}
	for id, want := range map[string]bool{
		"claude-opus": true, "claude-opus-5": true, "claude-opus-4-5-20251101": true,
		"claude-opusplus-9": false, "claude-3-opus-20240229": false, "claude-sonnet-4": false,
	} {
		if got := familyMatch(id, "claude-opus"); got != want {
			t.Errorf("familyMatch(%q, claude-opus) = %v, want %v", id, got, want)
		}
	}
}
