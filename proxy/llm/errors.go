package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ErrNotConfigured is returned by Complete on a nil Adapter and by New for an
// empty config. It is not a degradation: callers take their deterministic path
// without a notice.
var ErrNotConfigured = errors.New("llm: no LLM configured")

// ErrChainExhausted: every provider in the chain failed with budget to spare.
var ErrChainExhausted = errors.New("llm: every provider in the chain failed")

// ErrStreamBroken: a streamed answer failed after its first chunk reached the
// caller, so the chain did not fail over (the caller already holds part of an
// answer from that model).
var ErrStreamBroken = errors.New("llm: the streamed answer broke off after its first chunk")

// ErrBudgetExhausted: the call budget ran out before any provider answered.
// errors.Is(ErrBudgetExhausted, context.DeadlineExceeded) is true.
var ErrBudgetExhausted error = budgetError{}

type budgetError struct{}

func (budgetError) Error() string        { return "llm: call budget spent" }
func (budgetError) Is(target error) bool { return target == context.DeadlineExceeded }

// Outcome classifies how one attempt ended.
type Outcome string

const (
	OutcomeOK         Outcome = "ok"         // a usable completion
	OutcomeTransport  Outcome = "transport"  // connect/reset/read error; Status is 0 unless headers had arrived
	OutcomeTimeout    Outcome = "timeout"    // the per-attempt cap (MCPCTL_LLM_PROVIDER_TIMEOUT_MS) ran out
	OutcomeBudget     Outcome = "budget"     // the call budget (or the caller's earlier deadline) ran out
	OutcomeCanceled   Outcome = "canceled"   // the caller cancelled
	OutcomeStatus     Outcome = "status"     // non-2xx answer, Status holds it
	OutcomeEmpty      Outcome = "empty"      // 2xx, well-formed, but no text
	OutcomeInvalid    Outcome = "invalid"    // 2xx with a body that is not the wire format
	OutcomeUnresolved Outcome = "unresolved" // a claude-<family>-latest alias matched no listed model
)

// Attempt records one provider attempt.
type Attempt struct {
	Provider string
	// Model is the model actually requested: the resolved id for an
	// auto-follow alias, the alias itself if resolution failed, and for the
	// answering attempt the model the server says answered (when it says).
	Model    string
	Outcome  Outcome
	Status   int    // HTTP status; 0 when no response arrived
	Detail   string // short human-readable reason, e.g. "not_found_error: model: x"
	Excerpt  string // first <= 200 bytes of the response body (valid UTF-8, one line)
	Duration time.Duration
	// OAuthGated: the provider's key is a Claude subscription OAuth token and
	// the answer was one Anthropic gives such tokens outside its own client:
	// 401, 403, 404 or 429 (Detail then ends with OAuthHint(Status)).
	OAuthGated bool
}

func (a Attempt) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): ", a.Provider, a.Model)
	switch a.Outcome {
	case OutcomeOK:
		b.WriteString("ok")
	case OutcomeStatus:
		fmt.Fprintf(&b, "HTTP %d", a.Status)
	default:
		b.WriteString(string(a.Outcome))
		if a.Status != 0 {
			fmt.Fprintf(&b, " (HTTP %d)", a.Status)
		}
	}
	fmt.Fprintf(&b, " after %s", a.Duration.Round(time.Millisecond))
	if a.Detail != "" {
		b.WriteString(": ")
		b.WriteString(a.Detail)
	}
	return b.String()
}

// ChainError is the error of a Complete that got no answer. It names every
// attempt made. Unwrap gives ErrChainExhausted, ErrBudgetExhausted, or the
// caller's ctx.Err() (context.Canceled / context.DeadlineExceeded).
type ChainError struct {
	Attempts    []Attempt
	Budget      time.Duration // the call budget in force
	Elapsed     time.Duration
	BudgetSpent bool // time ran out: the call budget, or the caller's earlier deadline
	Err         error
}

func (e *ChainError) Unwrap() error { return e.Err }

func (e *ChainError) Error() string {
	var b strings.Builder
	switch {
	case errors.Is(e.Err, ErrBudgetExhausted):
		fmt.Fprintf(&b, "llm: call budget %s spent", e.Budget)
	case errors.Is(e.Err, ErrChainExhausted):
		b.WriteString("llm: every provider failed")
	case errors.Is(e.Err, ErrStreamBroken):
		b.WriteString("llm: the streamed answer broke off after its first chunk (no failover once the caller has part of an answer)")
	case e.Err != nil:
		fmt.Fprintf(&b, "llm: stopped by caller (%v)", e.Err)
	default:
		b.WriteString("llm: no answer")
	}
	fmt.Fprintf(&b, " after %d attempt(s) in %s", len(e.Attempts), e.Elapsed.Round(time.Millisecond))
	for i, a := range e.Attempts {
		fmt.Fprintf(&b, "; [%d] %s", i+1, a)
	}
	return b.String()
}

// Reason is a short phrase for "⚠ <feature> unavailable (<reason>)" notices
// and degradedReason audit fields.
func (e *ChainError) Reason() string {
	reason := e.reason()
	if g := e.gated(); g != nil && !errors.Is(e.Err, context.Canceled) {
		reason += "; " + g.Provider + ": " + OAuthHint(g.Status)
	}
	return reason
}

// gated is the last attempt that met the OAuth gating pattern, or nil.
func (e *ChainError) gated() *Attempt {
	for i := len(e.Attempts) - 1; i >= 0; i-- {
		if e.Attempts[i].OAuthGated {
			return &e.Attempts[i]
		}
	}
	return nil
}

func (e *ChainError) reason() string {
	n := len(e.Attempts)
	switch {
	case errors.Is(e.Err, context.Canceled):
		return "request cancelled"
	case errors.Is(e.Err, ErrBudgetExhausted):
		return fmt.Sprintf("LLM budget %s spent after %d attempt(s)", e.Budget, n)
	case e.BudgetSpent:
		return fmt.Sprintf("deadline passed after %d LLM attempt(s)", n)
	case n > 0:
		last := e.Attempts[n-1]
		what := string(last.Outcome)
		if last.Status != 0 {
			what = fmt.Sprintf("HTTP %d", last.Status)
		}
		return fmt.Sprintf("all %d LLM provider(s) failed; last: %s (%s) %s", n, last.Provider, last.Model, what)
	default:
		return "LLM unavailable"
	}
}

const excerptBytes = 200

// excerpt returns at most excerptBytes bytes of body, cut on a rune boundary,
// invalid UTF-8 replaced, whitespace runs collapsed to one space.
func excerpt(body []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body[:min(len(body), 4*excerptBytes)]), "\uFFFD")), " ")
	if len(s) <= excerptBytes {
		return s
	}
	cut := excerptBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
