package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Kind names one behaviour of the fake: how it answers a request.
type Kind string

// The behaviour catalogue. Streaming-only faults applied to a request without
// "stream": true do the same to the JSON body (described per kind).
const (
	// OK answers 200 with a deterministic text derived from the prompt: Reply(prompt),
	// or Step.Text when set.
	OK Kind = "ok"
	// Slow answers like OK after Step.Delay (default 1s); nothing is sent meanwhile.
	Slow Kind = "slow"
	// HangBeforeHeaders never answers: no status line, no headers.
	HangBeforeHeaders Kind = "hang_before_headers"
	// HangAfterHeaders sends 200 and its headers, flushes them, then nothing more.
	HangAfterHeaders Kind = "hang_after_headers"
	// StallMidStream sends the start of the answer and about half of its text, then
	// nothing more (a plain request gets half of its JSON body).
	StallMidStream Kind = "stall_mid_stream"
	// TruncatedStream sends the start of the answer and about half of its text, then
	// ends the response cleanly without the stop events or [DONE] (a plain
	// request gets half of its JSON body).
	TruncatedStream Kind = "truncated_stream"
	// StreamError sends 200, the start of the answer and about half of its text,
	// then an in-stream error (Anthropic: an "error" event with overloaded_error;
	// OpenAI: a data chunk holding an error object) and ends. A plain request gets
	// the same error as an HTTP error (529 / 500).
	StreamError Kind = "stream_error"
	// NotFound answers 404: the model does not exist.
	NotFound Kind = "not_found"
	// BadRequest answers 400 invalid_request_error (Step.Text is the message).
	BadRequest Kind = "bad_request"
	// Unauthorized answers 401: the API key is invalid.
	Unauthorized Kind = "unauthorized"
	// EchoCredentials answers 401 like Unauthorized, its error message
	// quoting the credentials the request carried (its Authorization and
	// x-api-key headers), as some gateways and providers do.
	EchoCredentials Kind = "unauthorized_echo"
	// AnswerEcho answers 200 like OK, its completion text quoting the
	// credentials the request carried (its Authorization and x-api-key
	// headers), as a model told them by a careless gateway might. Streamed,
	// each credential is cut across two chunks.
	AnswerEcho Kind = "answer_echo"
	// RateLimited answers 429 with retry-after and retry-after-ms headers of
	// Step.Delay (default 1s).
	RateLimited Kind = "rate_limited"
	// ServerError answers 500 (Anthropic api_error, OpenAI server_error).
	ServerError Kind = "server_error"
	// Overloaded answers 529 overloaded_error (Anthropic) or 503 (OpenAI).
	Overloaded Kind = "overloaded"
	// Empty answers 200 with an empty completion text (an empty model list for
	// the models listing).
	Empty Kind = "empty"
	// Malformed answers 200 with a body that is not valid JSON (streams: one event
	// whose data is not valid JSON, amid valid ones).
	Malformed Kind = "malformed"
	// Reset hijacks the connection and closes it with SO_LINGER 0 (a TCP reset)
	// without answering.
	Reset Kind = "reset"
)

// KindInfo describes one behaviour of the catalogue.
type KindInfo struct {
	Kind    Kind   `json:"kind"`
	Summary string `json:"summary"`
	// Delay says what Step.Delay means for this kind; empty when it is ignored.
	Delay string `json:"delay,omitempty"`
}

// defaultDelay applies to Slow and RateLimited steps whose Delay is zero.
const defaultDelay = time.Second

var catalogue = []KindInfo{
	{OK, "200 with a deterministic text derived from the prompt (Reply) or the step's text", ""},
	{Slow, "answers like ok after a delay; nothing is sent meanwhile", "wait before answering (default 1s)"},
	{HangBeforeHeaders, "never answers: no status line, no headers", ""},
	{HangAfterHeaders, "200 and headers flushed, then nothing", ""},
	{StallMidStream, "streams the start and about half of the text, then nothing (plain: half of the JSON body)", ""},
	{TruncatedStream, "streams the start and about half of the text, then ends cleanly without stop events / [DONE] (plain: half of the JSON body)", ""},
	{StreamError, "200, part of the stream, then an in-stream error (anthropic: error event, openai: error chunk); plain: the same error as HTTP 529/500", ""},
	{NotFound, "404: the model does not exist", ""},
	{BadRequest, "400 invalid_request_error", ""},
	{Unauthorized, "401: invalid API key", ""},
	{EchoCredentials, "401 whose error message quotes the request's Authorization and x-api-key headers", ""},
	{AnswerEcho, "200 whose answer quotes the request's Authorization and x-api-key headers; streamed, each cut across two chunks", ""},
	{RateLimited, "429 with retry-after / retry-after-ms", "advertised retry-after (default 1s)"},
	{ServerError, "500 (anthropic api_error, openai server_error)", ""},
	{Overloaded, "529 overloaded_error (anthropic) or 503 (openai)", ""},
	{Empty, "200 with an empty completion text (models listing: no models)", ""},
	{Malformed, "200 with a body that is not valid JSON (streams: one invalid event)", ""},
	{Reset, "closes the connection with a TCP reset, no answer", ""},
}

// Catalogue lists every behaviour with its description, in a stable order, for
// CLIs and reports.
func Catalogue() []KindInfo {
	return append([]KindInfo(nil), catalogue...)
}

// Valid reports whether k is in the catalogue.
func (k Kind) Valid() bool {
	for _, info := range catalogue {
		if info.Kind == k {
			return true
		}
	}
	return false
}

// Step is one configured behaviour: a Kind and its parameters.
type Step struct {
	// Kind is the behaviour; the zero Step is invalid.
	Kind Kind
	// Delay is the wait of Slow and the retry-after of RateLimited (zero means
	// 1s); other kinds ignore it.
	Delay time.Duration
	// Text replaces Reply(prompt) as the completion text of the kinds that send
	// text, and is the error message of the kinds that answer an error.
	Text string
}

// Do returns the Step of kind k with default parameters.
func Do(k Kind) Step { return Step{Kind: k} }

// SlowFor returns a Slow step that answers after d.
func SlowFor(d time.Duration) Step { return Step{Kind: Slow, Delay: d} }

// Validate reports an unknown kind or a negative delay.
func (s Step) Validate() error {
	if !s.Kind.Valid() {
		return fmt.Errorf("llm: unknown behaviour %q", s.Kind)
	}
	if s.Delay < 0 {
		return fmt.Errorf("llm: %s: negative delay %v", s.Kind, s.Delay)
	}
	return nil
}

// delay is Delay with its default applied.
func (s Step) delay() time.Duration {
	if s.Delay == 0 {
		return defaultDelay
	}
	return s.Delay
}

// String returns the short form read by ParseStep: "kind" or "kind:delay".
// Text is not part of it.
func (s Step) String() string {
	if s.Delay != 0 {
		return string(s.Kind) + ":" + s.Delay.String()
	}
	return string(s.Kind)
}

// ParseStep reads the short form of a step: a kind, optionally followed by a
// colon and a Go duration ("ok", "slow:250ms", "rate_limited:2s").
func ParseStep(s string) (Step, error) {
	kind, delay, hasDelay := strings.Cut(strings.TrimSpace(s), ":")
	step := Step{Kind: Kind(kind)}
	if hasDelay {
		d, err := time.ParseDuration(delay)
		if err != nil {
			return Step{}, fmt.Errorf("llm: step %q: %w", s, err)
		}
		step.Delay = d
	}
	if err := step.Validate(); err != nil {
		return Step{}, err
	}
	return step, nil
}

// stepJSON is the object form of a Step on the wire.
type stepJSON struct {
	Kind  Kind   `json:"kind"`
	Delay string `json:"delay,omitempty"`
	Text  string `json:"text,omitempty"`
}

// MarshalJSON writes a step as {"kind":..., "delay":"250ms", "text":...}.
func (s Step) MarshalJSON() ([]byte, error) {
	out := stepJSON{Kind: s.Kind, Text: s.Text}
	if s.Delay != 0 {
		out.Delay = s.Delay.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the object form or the short form of ParseStep, and
// validates the step.
func (s *Step) UnmarshalJSON(data []byte) error {
	var short string
	if err := json.Unmarshal(data, &short); err == nil {
		step, err := ParseStep(short)
		if err != nil {
			return err
		}
		*s = step
		return nil
	}
	var in stepJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("llm: step: %w", err)
	}
	step := Step{Kind: in.Kind, Text: in.Text}
	if in.Delay != "" {
		d, err := time.ParseDuration(in.Delay)
		if err != nil {
			return fmt.Errorf("llm: step %s: %w", in.Kind, err)
		}
		step.Delay = d
	}
	if err := step.Validate(); err != nil {
		return err
	}
	*s = step
	return nil
}

// Plan decides the step of each successive request for one model: either a
// sequence of Steps, consumed in order with the last one repeating, or a seeded
// Random draw. Exactly one of the two is set.
type Plan struct {
	Steps  []Step  `json:"steps,omitempty"`
	Random *Random `json:"random,omitempty"`
}

// Random draws each request's step among Choices with probability proportional
// to their weights, from a generator seeded with Seed: the same seed gives the
// same draws in the same order.
type Random struct {
	Seed    uint64   `json:"seed"`
	Choices []Choice `json:"choices"`
}

// Choice is one weighted alternative of a Random plan.
type Choice struct {
	Step   Step    `json:"step"`
	Weight float64 `json:"weight"`
}

// Validate reports a plan that is empty, sets both forms, or holds an invalid
// step or weight.
func (p Plan) Validate() error {
	switch {
	case len(p.Steps) == 0 && p.Random == nil:
		return errors.New("llm: plan has neither steps nor random")
	case len(p.Steps) > 0 && p.Random != nil:
		return errors.New("llm: plan has both steps and random")
	}
	for _, s := range p.Steps {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	if p.Random == nil {
		return nil
	}
	if len(p.Random.Choices) == 0 {
		return errors.New("llm: random plan has no choices")
	}
	total := 0.0
	for _, c := range p.Random.Choices {
		if err := c.Step.Validate(); err != nil {
			return err
		}
		if c.Weight < 0 {
			return fmt.Errorf("llm: random choice %s: negative weight", c.Step)
		}
		total += c.Weight
	}
	if total <= 0 {
		return errors.New("llm: random plan weights add up to zero")
	}
	return nil
}

// clone returns a deep copy of p, so callers cannot change a plan in use.
func (p Plan) clone() Plan {
	out := Plan{Steps: append([]Step(nil), p.Steps...)}
	if p.Random != nil {
		r := *p.Random
		r.Choices = append([]Choice(nil), r.Choices...)
		out.Random = &r
	}
	return out
}

// script is a plan in use: the plan and where it stands.
type script struct {
	plan  Plan
	next  int        // index of the next step of a sequence
	rng   *rand.Rand // generator of a random plan
	total float64    // sum of the weights of a random plan
}

func newScript(p Plan) *script {
	sc := &script{plan: p.clone()}
	if r := sc.plan.Random; r != nil {
		sc.rng = rand.New(rand.NewPCG(r.Seed, r.Seed^0x9e3779b97f4a7c15))
		for _, c := range r.Choices {
			sc.total += c.Weight
		}
	}
	return sc
}

// draw returns the step for the next request. The caller holds the server lock.
func (sc *script) draw() Step {
	if r := sc.plan.Random; r != nil {
		x := sc.rng.Float64() * sc.total
		for _, c := range r.Choices {
			if x < c.Weight {
				return c.Step
			}
			x -= c.Weight
		}
		// Rounding can leave x just past the last weight: take the last
		// choice that has any weight.
		for i := len(r.Choices) - 1; ; i-- {
			if r.Choices[i].Weight > 0 {
				return r.Choices[i].Step
			}
		}
	}
	step := sc.plan.Steps[sc.next]
	if sc.next < len(sc.plan.Steps)-1 {
		sc.next++
	}
	return step
}
