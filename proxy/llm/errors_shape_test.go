package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestChainErrorWholeShape: the error a caller logs and the reason a notice
// shows are checked whole, for every way a chain ends, not by a prefix:
// each names why, how many attempts in how long, and every attempt with
// its provider, model, outcome, status and detail.
func TestChainErrorWholeShape(t *testing.T) {
	ok := Attempt{Provider: "a", Model: "m-a", Outcome: OutcomeOK, Duration: 1500 * time.Microsecond}
	status := Attempt{Provider: "b", Model: "m-b", Outcome: OutcomeStatus, Status: 503, Detail: "overloaded", Duration: 20 * time.Millisecond}
	transport := Attempt{Provider: "c", Model: "m-c", Outcome: OutcomeTransport, Status: 502, Duration: 3 * time.Millisecond}
	timeout := Attempt{Provider: "d", Model: "m-d", Outcome: OutcomeTimeout, Duration: 2 * time.Second}
	for _, c := range []struct {
		name         string
		err          *ChainError
		error, reson string
	}{
		{"chain exhausted", &ChainError{Attempts: []Attempt{status, transport}, Elapsed: 23 * time.Millisecond, Err: ErrChainExhausted},
			"llm: every provider failed after 2 attempt(s) in 23ms; [1] b (m-b): HTTP 503 after 20ms: overloaded; [2] c (m-c): transport (HTTP 502) after 3ms",
			"all 2 LLM provider(s) failed; last: c (m-c) HTTP 502"},
		{"chain exhausted, last without status", &ChainError{Attempts: []Attempt{timeout}, Elapsed: 2 * time.Second, Err: ErrChainExhausted},
			"llm: every provider failed after 1 attempt(s) in 2s; [1] d (m-d): timeout after 2s",
			"all 1 LLM provider(s) failed; last: d (m-d) timeout"},
		{"budget", &ChainError{Attempts: []Attempt{timeout}, Budget: 3 * time.Second, Elapsed: 3 * time.Second, BudgetSpent: true, Err: ErrBudgetExhausted},
			"llm: call budget 3s spent after 1 attempt(s) in 3s; [1] d (m-d): timeout after 2s",
			"LLM budget 3s spent after 1 attempt(s)"},
		{"caller's deadline", &ChainError{Attempts: []Attempt{ok}, Elapsed: time.Second, BudgetSpent: true, Err: context.DeadlineExceeded},
			"llm: stopped by caller (context deadline exceeded) after 1 attempt(s) in 1s; [1] a (m-a): ok after 2ms",
			"deadline passed after 1 LLM attempt(s)"},
		{"cancelled", &ChainError{Elapsed: 4 * time.Millisecond, Err: context.Canceled},
			"llm: stopped by caller (context canceled) after 0 attempt(s) in 4ms",
			"request cancelled"},
		{"stream broken", &ChainError{Attempts: []Attempt{ok}, Elapsed: 5 * time.Millisecond, Err: ErrStreamBroken},
			"llm: the streamed answer broke off after its first chunk (no failover once the caller has part of an answer) after 1 attempt(s) in 5ms; [1] a (m-a): ok after 2ms",
			"all 1 LLM provider(s) failed; last: a (m-a) ok"},
		{"nothing", &ChainError{},
			"llm: no answer after 0 attempt(s) in 0s",
			"LLM unavailable"},
	} {
		if got := c.err.Error(); got != c.error {
			t.Errorf("%s: Error()\n got %q\nwant %q", c.name, got, c.error)
		}
		if got := c.err.Reason(); got != c.reson {
			t.Errorf("%s: Reason()\n got %q\nwant %q", c.name, got, c.reson)
		}
	}
}

// TestReasonNamesTheLastGatedProvider: the OAuth hint names the provider
// of the last gated attempt, and a cancelled call gets no hint.
func TestReasonNamesTheLastGatedProvider(t *testing.T) {
	gated := func(p string) Attempt {
		return Attempt{Provider: p, Model: "m", Outcome: OutcomeStatus, Status: 429, OAuthGated: true}
	}
	e := &ChainError{Attempts: []Attempt{gated("first"), gated("second"), {Provider: "third", Model: "m", Outcome: OutcomeTimeout}}, Err: ErrChainExhausted}
	want := "all 3 LLM provider(s) failed; last: third (m) timeout; second: " + OAuthGatedHint
	if got := e.Reason(); got != want {
		t.Fatalf("Reason()\n got %q\nwant %q", got, want)
	}
	e.Err = context.Canceled
	if got := e.Reason(); got != "request cancelled" {
		t.Fatalf("cancelled: Reason() %q", got)
	}
	if !errors.Is(e, context.Canceled) {
		t.Fatal("ChainError does not unwrap to its cause")
	}
}

// TestExcerptKeepsTheFirst200Bytes: a long body is cut at 200 bytes, or
// at the rune start just before when byte 200 is inside a rune; a body of
// exactly 200 bytes is whole.
func TestExcerptKeepsTheFirst200Bytes(t *testing.T) {
	if got := excerpt([]byte(strings.Repeat("a", 300))); got != strings.Repeat("a", 200) {
		t.Fatalf("ASCII: %d bytes", len(got))
	}
	if got := excerpt([]byte(strings.Repeat("b", 200))); got != strings.Repeat("b", 200) {
		t.Fatalf("exactly 200: %d bytes", len(got))
	}
	// "x" then 3-byte runes: byte 200 falls inside the 67th rune, which
	// starts at 199.
	in := "x" + strings.Repeat("日", 100)
	if got := excerpt([]byte(in)); got != in[:199] {
		t.Fatalf("cut inside a rune: %d bytes, want 199", len(got))
	}
}
