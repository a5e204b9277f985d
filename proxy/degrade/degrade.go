// Package degrade is the one helper every optional LLM use goes through.
//
// Bounded runs an optional operation under a timeout and cannot fail: the
// caller gets a value or a reason, so the deterministic fallback is
// unconditional. Degradation renders that reason the same way everywhere: the
// "⚠ <feature> unavailable (<reason>)" notice in the content, and the
// degraded/degradedReason fields of the audit row.
//
// "No LLM configured" is a choice, not a degradation: Bounded reports it as
// Skipped, with no reason and no notice.
package degrade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// Result is what a bounded optional operation produced.
type Result[T any] struct {
	Value T
	// OK: Value is the operation's own answer.
	OK bool
	// Skipped: the operation was not attempted because no LLM is configured.
	// Not a degradation.
	Skipped bool
	// Reason says why !OK && !Skipped: the degradation to report.
	Reason string
}

// Bounded runs f with a context that ends after timeout (or earlier, with
// ctx). It returns when f returns or when that context ends, whichever is
// first, even if f ignores its context; a panic in f becomes a reason.
func Bounded[T any](ctx context.Context, timeout time.Duration, f func(context.Context) (T, error)) Result[T] {
	if timeout <= 0 {
		return Result[T]{Reason: "budget spent"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type out struct {
		v   T
		err error
	}
	done := make(chan out, 1)
	go func() {
		var o out
		defer func() {
			if p := recover(); p != nil {
				o.err = fmt.Errorf("internal error: %v", p)
			}
			done <- o
		}()
		o.v, o.err = f(ctx)
	}()
	select {
	case o := <-done:
		switch {
		case o.err == nil:
			return Result[T]{Value: o.v, OK: true}
		case errors.Is(o.err, llm.ErrNotConfigured):
			return Result[T]{Skipped: true}
		default:
			return Result[T]{Reason: reason(o.err, timeout)}
		}
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			return Result[T]{Reason: fmt.Sprintf("no answer within %v", timeout)}
		}
		return Result[T]{Reason: "request cancelled"}
	}
}

// reason turns an error into the short phrase a notice quotes.
func reason(err error, timeout time.Duration) string {
	var ce *llm.ChainError
	if errors.As(err, &ce) {
		return ce.Reason()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %v", timeout)
	}
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// Degradation is one feature that fell back to its deterministic path.
type Degradation struct {
	Feature string // "Smart page titles", "Section summaries", "Smart prompt-selection"
	Reason  string
	// Affected counts the items that took the fallback (sections, pages);
	// zero when the whole feature did.
	Affected int
	Unit     string // what Affected counts: "sections"
}

// Notice is the text the client sees, quoting the request's trace code.
func (d Degradation) Notice(code string) string {
	s := fmt.Sprintf("⚠ %s unavailable (%s)", d.Feature, d.Reason)
	if d.Affected > 0 {
		s += fmt.Sprintf("; %d %s affected", d.Affected, d.Unit)
	}
	if code != "" {
		s += fmt.Sprintf(" [trace %s]", code)
	}
	return s
}

// AuditReason is the degradedReason of the audit row.
func (d Degradation) AuditReason() string {
	s := fmt.Sprintf("%s unavailable (%s)", d.Feature, d.Reason)
	if d.Affected > 0 {
		s += fmt.Sprintf("; %d %s affected", d.Affected, d.Unit)
	}
	return s
}

// Ask runs one LLM completion as an optional operation: bounded by timeout
// (and ctx), never failing, with every provider attempt handed to record
// (for llm_attempt audit rows) whether the call succeeded or not.
func Ask(ctx context.Context, a *llm.Adapter, timeout time.Duration, req llm.Request, record func(start time.Time, attempts []llm.Attempt)) Result[string] {
	start := time.Now()
	return Bounded(ctx, timeout, func(ctx context.Context) (string, error) {
		resp, err := a.Complete(ctx, req)
		attempts := resp.Attempts
		var ce *llm.ChainError
		if errors.As(err, &ce) {
			attempts = ce.Attempts
		}
		if record != nil && len(attempts) > 0 {
			record(start, attempts)
		}
		return resp.Text, err
	})
}
