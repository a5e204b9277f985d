package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

const (
	modelsPageLimit = 100 // ?limit= on GET /v1/models
	maxModelPages   = 20  // bound on pages followed per resolution

	// DefaultModelRefresh is how long a claude-<family>-latest resolution is
	// served before the next call resolves it again.
	DefaultModelRefresh = 15 * time.Minute
)

// followFamily returns "claude-<family>" for a model written as
// "claude-<family>-latest", and ok=false for a pinned model.
func followFamily(model string) (prefix string, ok bool) {
	if !strings.HasPrefix(model, "claude-") || !strings.HasSuffix(model, "-latest") {
		return "", false
	}
	prefix = strings.TrimSuffix(model, "-latest")
	if prefix == "claude" || prefix == "claude-" {
		return "", false
	}
	return prefix, true
}

// familyMatch is the documented rule: the id is the prefix itself or the
// prefix followed by "-".
func familyMatch(id, prefix string) bool {
	return id == prefix || strings.HasPrefix(id, prefix+"-")
}

// modelResolver resolves and caches one provider's claude-<family>-latest.
// Concurrent callers share one in-flight resolution; each waits no longer
// than its own context.
type modelResolver struct {
	alias   string
	prefix  string
	refresh time.Duration
	now     func() time.Time
	p       *anthropicProvider

	mu        sync.Mutex
	model     string // last good resolution ("" if none)
	fetchedAt time.Time
	inflight  *resolveCall
}

type resolveCall struct {
	done     chan struct{}
	model    string
	fail     *attemptResult
	ctxEnded bool // the resolving caller's context ended: others may retry
}

// resolve returns the model id to request, or the failure to record as the
// attempt (with Model = the alias).
func (r *modelResolver) resolve(ctx context.Context) (string, *attemptResult) {
	for {
		r.mu.Lock()
		if r.model != "" && r.now().Sub(r.fetchedAt) < r.refresh {
			m := r.model
			r.mu.Unlock()
			return m, nil
		}
		if c := r.inflight; c != nil {
			r.mu.Unlock()
			select {
			case <-c.done:
			case <-ctx.Done():
				return "", &attemptResult{model: r.alias, outcome: OutcomeTransport,
					detail: "waiting for " + r.alias + " resolution: " + ctx.Err().Error()}
			}
			if c.fail == nil {
				return c.model, nil
			}
			if stale := r.last(); stale != "" {
				return stale, nil
			}
			if c.ctxEnded && ctx.Err() == nil {
				continue // the resolver gave up on its own clock; try on ours
			}
			return "", c.fail
		}
		c := &resolveCall{done: make(chan struct{})}
		r.inflight = c
		stale := r.model
		r.mu.Unlock()

		c.model, c.fail = r.fetch(ctx)
		c.ctxEnded = ctx.Err() != nil

		r.mu.Lock()
		if c.fail == nil {
			r.model, r.fetchedAt = c.model, r.now()
		}
		r.inflight = nil
		r.mu.Unlock()
		close(c.done)

		if c.fail != nil && stale != "" {
			return stale, nil // a failed refresh keeps the last good answer
		}
		return c.model, c.fail
	}
}

func (r *modelResolver) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model
}

// forget drops a resolution the provider answered 404 for.
func (r *modelResolver) forget(model string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.model == model {
		r.model, r.fetchedAt = "", time.Time{}
	}
}

type modelsPage struct {
	Data []struct {
		ID        string `json:"id"`
		CreatedAt string `json:"created_at"`
		Type      string `json:"type"`
	} `json:"data"`
	HasMore bool   `json:"has_more"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
}

// fetch lists the provider's models page by page and picks the newest
// family member by created_at.
func (r *modelResolver) fetch(ctx context.Context) (string, *attemptResult) {
	fail := func(a attemptResult) (string, *attemptResult) {
		a.model, a.detail = r.alias, "resolving "+r.alias+": "+a.detail
		return "", &a
	}
	var (
		best     string
		bestAt   time.Time
		after    string
		listed   int
		lastPage modelsPage
	)
	for page := 1; ; page++ {
		if page > maxModelPages {
			return fail(attemptResult{outcome: OutcomeUnresolved,
				detail: fmt.Sprintf("model list still has_more after %d pages", maxModelPages)})
		}
		q := url.Values{"limit": {fmt.Sprint(modelsPageLimit)}}
		if after != "" {
			q.Set("after_id", after)
		}
		res, err := r.p.http.send(ctx, http.MethodGet, r.p.base+"/v1/models?"+q.Encode(), r.p.header(), nil, maxModelsBody, nil)
		a, ok := fromHTTP(r.alias, "GET /v1/models", res, err)
		if !ok {
			return fail(a)
		}
		lastPage = modelsPage{}
		if err := json.Unmarshal(res.body, &lastPage); err != nil {
			return fail(invalid(a, "GET /v1/models: malformed JSON: %v", err))
		}
		for _, m := range lastPage.Data {
			listed++
			if !familyMatch(m.ID, r.prefix) {
				continue
			}
			at, err := time.Parse(time.RFC3339, m.CreatedAt)
			if err != nil {
				continue // undated: cannot be ordered, so never chosen
			}
			if best == "" || at.After(bestAt) || (at.Equal(bestAt) && m.ID > best) {
				best, bestAt = m.ID, at
			}
		}
		if !lastPage.HasMore {
			break
		}
		next := lastPage.LastID
		if next == "" && len(lastPage.Data) > 0 {
			next = lastPage.Data[len(lastPage.Data)-1].ID
		}
		if next == "" || next == after {
			return fail(invalid(a, "GET /v1/models: has_more without a new last_id"))
		}
		after = next
	}
	if best == "" {
		return fail(attemptResult{outcome: OutcomeUnresolved,
			detail: fmt.Sprintf("no dated model id is %s or starts with %s- among %d listed", r.prefix, r.prefix, listed)})
	}
	return best, nil
}
