// Package llm is the proxy's one way to talk to a language model.
//
// Everything goes through [Adapter.Complete], which runs the configured
// failover chain (the primary provider, then its fallbacks) under ONE deadline:
// the call budget (knob MCPCTL_LLM_CALL_BUDGET_MS, overridable per call with
// [WithBudget]). Each provider attempt is capped at
// min(MCPCTL_LLM_PROVIDER_TIMEOUT_MS, what is left of the budget), so the worst
// case of a call is the budget, never N × the provider timeout. A caller's
// deadline, if earlier, wins; a caller's cancel stops the chain at once.
//
// # Bounded by construction
//
// Providers are unexported and only reachable through the Adapter. The single
// place that sends HTTP (httpCaller.send) refuses a context without a deadline,
// and Complete always installs one, even for context.Background() and no
// options. Zero knob values fall back to the knob defaults, never to "no limit".
// bounded_test.go holds the package (and the rest of proxy/) to this by
// scanning the source.
//
// # Failover
//
// An attempt fails over on a transport error, a per-attempt timeout, any
// non-2xx status (including a drifted model's 400, and 3xx: redirects are not
// followed), a malformed body, and an empty completion. The answer says which
// provider and model answered, whether the chain failed over, and lists every
// attempt. When the chain gives up, the error is a [*ChainError] naming every
// attempt (provider, model, HTTP status or 0, a body excerpt of at most 200
// bytes, duration) and whether time ran out.
//
// # Chain order
//
// The chain is the depth-first expansion of fallbacks starting at the primary:
// a provider, then each of its fallbacks in order with their own fallbacks
// expanded in place. A provider appears at most once (its first position). A
// fallback naming an unknown provider, or any provider reachable from itself,
// is a configuration error.
//
// # Anthropic model auto-follow
//
// An anthropic provider whose model is "claude-<family>-latest" (for example
// claude-sonnet-latest, claude-opus-latest, or claude-3-5-sonnet-latest) is
// resolved through GET {url}/v1/models, following pages (after_id) until
// has_more is false, bounded at maxModelPages pages. The family match rule: an
// id matches when it equals "claude-<family>" or starts with
// "claude-<family>-" — so claude-opus-latest matches claude-opus-5 and
// claude-opus-4-5-20251101 but not claude-opusplus-1 nor the older naming
// claude-3-opus-20240229. Among the matches the newest by created_at wins;
// version strings are never parsed or compared (an equal created_at is broken
// by the larger id, only to be deterministic). The resolution is cached per
// provider and refreshed lazily once older than the refresh interval
// ([WithModelRefresh]); resolving happens inside the attempt, so inside the
// call budget. A failed refresh keeps serving the last resolution; a 404 from
// the resolved model drops it so the next call resolves afresh.
package llm
