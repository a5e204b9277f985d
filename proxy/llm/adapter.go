package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system" // folded into the system prompt for anthropic
)

// Message is one turn of the conversation.
type Message struct {
	Role    string
	Content string
}

// Request is one completion request. MaxTokens 0 leaves it to the provider
// (anthropic, which requires it, gets 1024). Temperature nil is omitted.
type Request struct {
	System      string
	Messages    []Message
	MaxTokens   int
	Temperature *float64
}

// Response is a completion and how it was obtained.
type Response struct {
	Text       string
	Provider   string // the provider that answered
	Model      string // the model that answered (as reported by the server, if it says)
	FailedOver bool   // answered by a provider other than the first in the chain
	Attempts   []Attempt
	Elapsed    time.Duration
}

// provider is one configured endpoint. It is deliberately unexported: the only
// way to run an attempt is Adapter.Complete, which always sets a deadline.
type provider interface {
	name() string
	attempt(ctx context.Context, req *Request) attemptResult
	stream(ctx context.Context, req *Request, onChunk func(string)) attemptResult
}

// Adapter runs completions across the configured failover chain. It is safe
// for concurrent use. Build it with New; a nil *Adapter answers every
// Complete with ErrNotConfigured.
type Adapter struct {
	chain           []provider
	budget          time.Duration
	providerTimeout time.Duration
	http            *httpCaller
}

// AdapterOption tunes New.
type AdapterOption func(*adapterOptions)

type adapterOptions struct {
	getenv  func(string) string
	refresh time.Duration
	now     func() time.Time
}

// WithGetenv resolves apiKeyEnv through getenv instead of os.Getenv.
func WithGetenv(getenv func(string) string) AdapterOption {
	return func(o *adapterOptions) {
		if getenv != nil {
			o.getenv = getenv
		}
	}
}

// WithModelRefresh sets how long a claude-<family>-latest resolution is
// served before it is resolved again (default DefaultModelRefresh). Values
// <= 0 keep the default.
func WithModelRefresh(d time.Duration) AdapterOption {
	return func(o *adapterOptions) {
		if d > 0 {
			o.refresh = d
		}
	}
}

// New builds the adapter for cfg (validated, see Config.Chain) with the call
// budget and per-provider timeout from k. A zero or negative knob value means
// its default, never "unbounded". An empty cfg returns ErrNotConfigured.
func New(cfg Config, k knobs.Values, opts ...AdapterOption) (*Adapter, error) {
	o := adapterOptions{getenv: os.Getenv, refresh: DefaultModelRefresh, now: time.Now}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	names, err := cfg.Chain()
	if err != nil {
		return nil, err
	}
	def := knobs.Defaults()
	a := &Adapter{
		budget:          positiveOr(k.LLMCallBudget, def.LLMCallBudget),
		providerTimeout: positiveOr(k.LLMProviderTimeout, def.LLMProviderTimeout),
		http:            newHTTPCaller(),
	}
	for _, name := range names {
		pc := cfg.Providers[name]
		pc.Name = name
		if pc.APIKey == "" && pc.APIKeyEnv != "" {
			pc.APIKey = strings.TrimSpace(o.getenv(pc.APIKeyEnv))
		}
		base := strings.TrimRight(pc.URL, "/")
		switch pc.Kind {
		case KindOpenAI:
			a.chain = append(a.chain, &openaiProvider{cfg: pc, base: base, http: a.http})
		case KindAnthropic:
			p := &anthropicProvider{cfg: pc, base: strings.TrimSuffix(base, "/v1"), http: a.http}
			if prefix, ok := followFamily(pc.Model); ok {
				p.models = &modelResolver{alias: pc.Model, prefix: prefix, refresh: o.refresh, now: o.now, p: p}
			}
			a.chain = append(a.chain, p)
		}
	}
	return a, nil
}

func positiveOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Chain returns the provider names in the order Complete tries them.
func (a *Adapter) Chain() []string {
	if a == nil {
		return nil
	}
	names := make([]string, len(a.chain))
	for i, p := range a.chain {
		names[i] = p.name()
	}
	return names
}

// Close drops idle provider connections. In-flight calls are unaffected; the
// adapter stays usable.
func (a *Adapter) Close() {
	if a != nil {
		a.http.closeIdle()
	}
}

// Option tunes one Complete call.
type Option func(*callOptions)

type callOptions struct {
	budget          time.Duration
	providerTimeout time.Duration
}

// WithBudget replaces the call budget (MCPCTL_LLM_CALL_BUDGET_MS) for this
// call. Values <= 0 are ignored. A caller's context deadline, if earlier,
// still wins.
func WithBudget(d time.Duration) Option {
	return func(o *callOptions) {
		if d > 0 {
			o.budget = d
		}
	}
}

// WithProviderTimeout replaces the per-attempt cap
// (MCPCTL_LLM_PROVIDER_TIMEOUT_MS) for this call. Values <= 0 are ignored.
func WithProviderTimeout(d time.Duration) Option {
	return func(o *callOptions) {
		if d > 0 {
			o.providerTimeout = d
		}
	}
}

func (r *Request) validate() error {
	if len(r.Messages) == 0 {
		return errors.New("llm: request has no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleUser, RoleAssistant, RoleSystem:
		default:
			return fmt.Errorf("llm: message %d has role %q (want user, assistant or system)", i, m.Role)
		}
	}
	return nil
}

// Complete asks the chain for a completion within one deadline: the call
// budget, or ctx's deadline if earlier. Attempts run in chain order, each
// capped at min(provider timeout, time left). It returns the first usable
// completion, or a *ChainError naming every attempt. When ctx is cancelled no
// further attempt starts and the error wraps ctx.Err().
func (a *Adapter) Complete(ctx context.Context, req Request, opts ...Option) (Response, error) {
	return a.run(ctx, req, opts, func(ctx context.Context, p provider) (attemptResult, bool) {
		return p.attempt(ctx, &req), false
	})
}

// run is the failover chain under one deadline. try makes one attempt and
// reports whether it committed the call (a stream that delivered a chunk):
// a committed attempt that fails ends the chain instead of failing over.
func (a *Adapter) run(ctx context.Context, req Request, opts []Option, try func(context.Context, provider) (attemptResult, bool)) (Response, error) {
	if a == nil || len(a.chain) == 0 {
		return Response{}, ErrNotConfigured
	}
	if err := req.validate(); err != nil {
		return Response{}, err
	}
	co := callOptions{budget: a.budget, providerTimeout: a.providerTimeout}
	for _, o := range opts {
		if o != nil {
			o(&co)
		}
	}

	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, co.budget)
	defer cancel()
	deadline, _ := bctx.Deadline() // the budget's, or the caller's if earlier

	var attempts []Attempt
	stop := func(cause error) (Response, error) {
		return Response{}, &ChainError{
			Attempts:    attempts,
			Budget:      co.budget,
			Elapsed:     time.Since(start),
			BudgetSpent: !errors.Is(cause, context.Canceled) && !errors.Is(cause, ErrChainExhausted) && !errors.Is(cause, ErrStreamBroken),
			Err:         cause,
		}
	}
	// timeUp reports why the chain must stop, if it must: the caller's own
	// context first, then the budget deadline.
	timeUp := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if bctx.Err() != nil || !time.Now().Before(deadline) {
			return ErrBudgetExhausted
		}
		return nil
	}

	for _, p := range a.chain {
		if cause := timeUp(); cause != nil {
			return stop(cause)
		}
		t0 := time.Now()
		per := min(co.providerTimeout, deadline.Sub(t0))
		actx, acancel := context.WithTimeout(bctx, per)
		r, committed := try(actx, p)
		attemptTimedOut := actx.Err() != nil
		acancel()

		att := Attempt{
			Provider: p.name(), Model: r.model, Outcome: r.outcome, Status: r.status,
			Detail: r.detail, Excerpt: r.excerpt, Duration: time.Since(t0), OAuthGated: r.gated,
		}
		if r.outcome == OutcomeOK {
			attempts = append(attempts, att)
			return Response{
				Text: r.text, Provider: att.Provider, Model: att.Model,
				FailedOver: len(attempts) > 1, Attempts: attempts, Elapsed: time.Since(start),
			}, nil
		}
		cause := timeUp()
		if r.outcome == OutcomeTransport {
			// A transport error caused by one of our deadlines says which.
			switch {
			case errors.Is(cause, context.Canceled):
				att.Outcome, att.Detail = OutcomeCanceled, "cancelled by the caller"
			case errors.Is(cause, ErrBudgetExhausted):
				att.Outcome, att.Detail = OutcomeBudget, fmt.Sprintf("call budget %s spent", co.budget)
			case cause != nil:
				att.Outcome, att.Detail = OutcomeBudget, "the caller's deadline passed"
			case attemptTimedOut:
				att.Outcome, att.Detail = OutcomeTimeout, fmt.Sprintf("no answer within the %s attempt cap", per.Round(time.Millisecond))
			}
		}
		attempts = append(attempts, att)
		if cause != nil {
			return stop(cause)
		}
		if committed {
			return stop(ErrStreamBroken)
		}
	}
	return stop(ErrChainExhausted)
}
