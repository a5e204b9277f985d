package stage

import (
	"context"
	"time"
)

// Budget is one wall-clock budget shared by everything a single stage
// invocation does, however many LLM calls its loops and recursion make. A
// per-call cap bounds one call; only a shared budget bounds a loop of them.
//
// The executor creates one per stage invocation and disposes it when the
// stage ends, so a long-lived proxy accumulates no timers.
type Budget struct {
	ctx    context.Context
	cancel context.CancelFunc
	total  time.Duration
}

// NewBudget starts a budget of d under parent.
func NewBudget(parent context.Context, d time.Duration) *Budget {
	ctx, cancel := context.WithTimeout(parent, d)
	return &Budget{ctx: ctx, cancel: cancel, total: d}
}

// Context ends when the budget is spent (or the request ends).
func (b *Budget) Context() context.Context { return b.ctx }

// Total is the budget's size.
func (b *Budget) Total() time.Duration { return b.total }

// Remaining is what is left; zero once spent.
func (b *Budget) Remaining() time.Duration {
	if b.ctx.Err() != nil {
		return 0
	}
	dl, _ := b.ctx.Deadline()
	return max(time.Until(dl), 0)
}

// Spent reports whether nothing is left.
func (b *Budget) Spent() bool { return b.Remaining() == 0 }

// Dispose releases the budget's timer. Dispose may be called more than once.
func (b *Budget) Dispose() { b.cancel() }
