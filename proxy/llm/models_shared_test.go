package llm

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Callers of one claude-<family>-latest share one resolution (models.go's
// resolve). These specs hold what a waiting caller gets when that shared
// resolution fails, or when the caller that runs it gives up on its own
// clock, and how the list's ties and its paging without last_id are read.

// heldModels serves GET /v1/models from list, but holds the first request
// until release is closed, and tells entered when it arrives. Once released,
// that first request is answered with firstStatus (0: the list).
type heldModels struct {
	pg          *pager
	firstStatus int
	entered     chan struct{}
	release     chan struct{}
	first       atomic.Bool
}

func newHeldModels(list []listedModel, firstStatus int) *heldModels {
	return &heldModels{pg: &pager{list: list}, firstStatus: firstStatus,
		entered: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldModels) handler(w http.ResponseWriter, r *http.Request) {
	if h.first.CompareAndSwap(false, true) {
		close(h.entered)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		if h.firstStatus != 0 {
			http.Error(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`, h.firstStatus)
			return
		}
	}
	h.pg.handler(w, r)
}

// heldChain is an adapter whose primary, ant, follows claude-opus-latest
// through held (its first /v1/models request held, then answered with
// firstStatus) and answers completions with text; with fallback, an OpenAI
// provider fb answers "fallback" after it.
func heldChain(t *testing.T, firstStatus int, text string, fallback bool) (held *heldModels, s, fb *stub, ad *Adapter) {
	t.Helper()
	held = newHeldModels(catalogue, firstStatus)
	s = newStub(t, answer(text))
	s.models = held.handler
	cfg := chainOf(anthropicCfg("ant", s, "claude-opus-latest"))
	if fallback {
		fb = newStub(t, answer("fallback"))
		cfg = chainOf(anthropicCfg("ant", s, "claude-opus-latest", "fb"), openaiCfg("fb", fb, "qwen"))
	}
	return held, s, fb, newAdapter(t, cfg, knobsWith(5*time.Second, 4*time.Second))
}

// waitForWaiters returns once n goroutines are inside a resolution without
// fetching: with the one fetch held, each of them waits on it. It polls the
// goroutine stacks (there is no hook in the resolver to wait on), and fails
// the test after 10 s.
func waitForWaiters(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		got := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if strings.Contains(g, "(*modelResolver).resolve") && !strings.Contains(g, "(*modelResolver).fetch") {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d callers are waiting on the shared resolution after 10 s", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// callAll runs Complete in n goroutines with ctx and returns their answers
// and errors, by index.
func callAll(ad *Adapter, ctxs []context.Context) ([]Response, []error, *sync.WaitGroup) {
	resps, errs := make([]Response, len(ctxs)), make([]error, len(ctxs))
	var wg sync.WaitGroup
	for i, ctx := range ctxs {
		wg.Go(func() { resps[i], errs[i] = ad.Complete(ctx, hello) })
	}
	return resps, errs, &wg
}

func backgrounds(n int) []context.Context {
	out := make([]context.Context, n)
	for i := range out {
		out[i] = context.Background()
	}
	return out
}

// A shared resolution that fails fails every caller that waited on it with
// the same attempt, and nobody lists the models again for it: one request
// to /v1/models in all, and every caller fails over.
func TestCallersWaitingOnAFailedResolutionShareItsFailure(t *testing.T) {
	noLeaks(t)
	held, s, _, ad := heldChain(t, http.StatusInternalServerError, "never", true)

	first, firstErr, wg1 := callAll(ad, backgrounds(1))
	<-held.entered
	rest, restErr, wg := callAll(ad, backgrounds(5))
	waitForWaiters(t, 5)
	close(held.release)
	wg1.Wait()
	wg.Wait()

	for i, resp := range append(first, rest...) {
		if err := append(firstErr, restErr...)[i]; err != nil || resp.Provider != "fb" {
			t.Fatalf("caller %d: %+v, %v; want an answer from fb after the failed resolution", i, resp, err)
		}
		at := resp.Attempts[0]
		if at.Model != "claude-opus-latest" || at.Outcome != OutcomeStatus || at.Status != http.StatusInternalServerError || !strings.Contains(at.Detail, "resolving claude-opus-latest") {
			t.Errorf("caller %d: attempt 1 = %+v, want the resolution's 500 under the alias", i, at)
		}
	}
	if n := s.modelHits.Load(); n != 1 {
		t.Errorf("/v1/models hits = %d, want 1: the waiters share the failed resolution", n)
	}
	if n := s.hits.Load(); n != 0 {
		t.Errorf("/v1/messages hits = %d, want 0: no model was resolved", n)
	}
}

// When the caller running the shared resolution gives up on its own
// context, the callers waiting on it still have time: they resolve again
// (once, shared among them) and are answered by the provider itself.
func TestWaitersResolveAgainWhenTheResolversContextEnds(t *testing.T) {
	noLeaks(t)
	held, s, _, ad := heldChain(t, 0, "from ant", false)

	ctx, cancel := context.WithCancel(context.Background())
	_, firstErr, wg1 := callAll(ad, []context.Context{ctx})
	<-held.entered
	resps, errs, wg := callAll(ad, backgrounds(4))
	waitForWaiters(t, 4)
	cancel() // the resolver gives up; the held request ends with its client
	wg1.Wait()
	wg.Wait()

	if !errors.Is(firstErr[0], context.Canceled) {
		t.Errorf("the resolver's own call: %v, want context.Canceled", firstErr[0])
	}
	for i := range resps {
		if errs[i] != nil || resps[i].Provider != "ant" || resps[i].Model != "claude-opus-5" || resps[i].Text != "from ant" {
			t.Errorf("waiter %d: %+v, %v; want claude-opus-5 answering, resolved again on its own clock", i, resps[i], errs[i])
		}
	}
	// The abandoned request, then one shared resolution of three pages.
	if n := s.modelHits.Load(); n != 4 {
		t.Errorf("/v1/models hits = %d, want 4 (1 abandoned + one shared resolution of 3 pages)", n)
	}
}

// A caller waiting on someone else's resolution stops waiting when its own
// context ends, while the resolution is still held, and asks no fallback.
func TestAWaiterStopsOnItsOwnContext(t *testing.T) {
	noLeaks(t)
	held, _, fb, ad := heldChain(t, 0, "from ant", true)

	_, firstErr, wg1 := callAll(ad, backgrounds(1))
	<-held.entered
	ctx, cancel := context.WithCancel(context.Background())
	resp, errs, wg := callAll(ad, []context.Context{ctx})
	waitForWaiters(t, 1)
	cancel()
	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited: // while the resolution is still held
	case <-time.After(5 * time.Second):
		close(held.release)
		t.Fatal("a waiter whose context ended still waits on the held resolution after 5 s")
	}
	close(held.release)
	wg1.Wait()

	if firstErr[0] != nil {
		t.Errorf("the resolver's own call: %v, want an answer once released", firstErr[0])
	}
	if !errors.Is(errs[0], context.Canceled) {
		t.Fatalf("the waiter: %+v, %v; want context.Canceled", resp[0], errs[0])
	}
	ce := chainErr(t, errs[0])
	// The adapter words an attempt its caller ended itself (adapter.go),
	// whatever the provider was doing: here, waiting on the resolution.
	if at := ce.Attempts[0]; len(ce.Attempts) != 1 || at.Model != "claude-opus-latest" || at.Outcome != OutcomeCanceled {
		t.Errorf("the waiter's attempts = %+v, want one, cancelled, under the alias", ce.Attempts)
	}
	if n := fb.hits.Load(); n != 0 {
		t.Errorf("the fallback was asked %d times by a caller whose context had ended", n)
	}
}

// Two family members listed with the same created_at: the greater id wins,
// whichever comes first in the list, so the choice does not depend on the
// provider's order.
func TestEqualDatesAreBrokenByTheGreaterID(t *testing.T) {
	noLeaks(t)
	for _, list := range [][]listedModel{
		{{"claude-opus-5-a", "2026-05-12T00:00:00Z"}, {"claude-opus-5-b", "2026-05-12T00:00:00Z"}, {"claude-opus-4", "2025-01-01T00:00:00Z"}},
		{{"claude-opus-5-b", "2026-05-12T00:00:00Z"}, {"claude-opus-4", "2025-01-01T00:00:00Z"}, {"claude-opus-5-a", "2026-05-12T00:00:00Z"}},
	} {
		s := newStub(t, answer("ok"))
		s.models = (&pager{list: list}).handler
		ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults())
		resp, err := ad.Complete(context.Background(), hello)
		if err != nil || resp.Model != "claude-opus-5-b" {
			t.Errorf("listed %v: %+v, %v; want claude-opus-5-b (same date, greater id)", list, resp, err)
		}
	}
}

// A page that says has_more but leaves last_id out is followed from the
// last id it lists.
func TestAPageWithoutLastIDIsFollowedFromItsLastModel(t *testing.T) {
	noLeaks(t)
	pg := &pager{list: catalogue}
	s := newStub(t, answer("ok"))
	s.models = func(w http.ResponseWriter, r *http.Request) {
		rec := &lastIDDropper{ResponseWriter: w}
		pg.handler(rec, r)
	}
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults())
	resp, err := ad.Complete(context.Background(), hello)
	if err != nil || resp.Model != "claude-opus-5" {
		t.Fatalf("%+v, %v; want claude-opus-5, listed on the third page", resp, err)
	}
	afters, _ := pg.seen()
	if want := []string{"", "claude-3-opus-20240229", "claude-sonnet-4-5"}; strings.Join(afters, ",") != strings.Join(want, ",") {
		t.Errorf("after_id per page = %q, want %q (each page's last listed id)", afters, want)
	}
}

// lastIDDropper passes a models page on with its "last_id" member renamed,
// so the page no longer says where it ended.
type lastIDDropper struct{ http.ResponseWriter }

func (d *lastIDDropper) Write(p []byte) (int, error) {
	n := len(p)
	_, err := d.ResponseWriter.Write([]byte(strings.Replace(string(p), `"last_id"`, `"no_last_id"`, 1)))
	return n, err
}

// Streaming asks the same provider the same way: a 404 for the resolved
// model drops the resolution there too, so the next call lists the models
// again instead of asking for a withdrawn id until the refresh.
func TestAStreamed404ForgetsTheResolution(t *testing.T) {
	noLeaks(t)
	s := newStub(t, raw(http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-opus-5"}}`))
	s.models = (&pager{list: catalogue}).handler
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults())
	for i := 1; i <= 2; i++ {
		_, err := ad.Stream(context.Background(), hello, func(string) {})
		ce := chainErr(t, err)
		if at := ce.Attempts[0]; at.Status != http.StatusNotFound || at.Model != "claude-opus-5" {
			t.Errorf("stream %d: attempt %+v, want 404 naming claude-opus-5", i, at)
		}
		if n := s.modelHits.Load(); n != int32(3*i) {
			t.Errorf("stream %d: /v1/models hits %d, want %d (re-resolved after the 404)", i, n, 3*i)
		}
	}
}

// A gated subscription token is explained on a streamed call as on a plain
// one (TestOAuthGatedTokenIsExplained).
func TestAStreamedCallExplainsAGatedOAuthToken(t *testing.T) {
	noLeaks(t)
	f := gatedFake(t)
	for _, tc := range []struct {
		model  string
		status int
	}{
		{"claude-opus-4-20250514", http.StatusNotFound},
		{"claude-opus-latest", http.StatusTooManyRequests},
	} {
		a := gatedAdapter(t, f, testOAuthToken, tc.model)
		_, err := a.Stream(context.Background(), hello, func(string) {})
		ce := chainErr(t, err)
		last := ce.Attempts[len(ce.Attempts)-1]
		if last.Status != tc.status || !last.OAuthGated {
			t.Errorf("%s: attempt %+v, want status %d marked OAuthGated", tc.model, last, tc.status)
		}
		if !strings.Contains(err.Error(), "API key") || !strings.Contains(ce.Reason(), "subscription OAuth token") {
			t.Errorf("%s: the error and the notice reason must say the token is gated: %v / %s", tc.model, err, ce.Reason())
		}
	}
}
