package degrade

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

func TestBoundedNeverFails(t *testing.T) {
	ctx := context.Background()
	if r := Bounded(ctx, time.Second, func(context.Context) (int, error) { return 7, nil }); !r.OK || r.Value != 7 {
		t.Fatalf("ok: %+v", r)
	}
	if r := Bounded(ctx, time.Second, func(context.Context) (int, error) { return 0, llm.ErrNotConfigured }); !r.Skipped || r.Reason != "" {
		t.Fatalf("no LLM configured must be Skipped with no reason: %+v", r)
	}
	if r := Bounded(ctx, time.Second, func(context.Context) (int, error) { return 0, errors.New("boom") }); r.OK || r.Reason != "boom" {
		t.Fatalf("error: %+v", r)
	}
	if r := Bounded(ctx, time.Second, func(context.Context) (int, error) { panic("bad") }); r.OK || !strings.Contains(r.Reason, "bad") {
		t.Fatalf("panic: %+v", r)
	}
	if r := Bounded(ctx, 0, func(context.Context) (int, error) { t.Fatal("ran with no budget"); return 0, nil }); r.Reason != "budget spent" {
		t.Fatalf("no budget: %+v", r)
	}
}

func TestBoundedReturnsAtTheTimeoutEvenIfTheOperationIgnoresIt(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	start := time.Now()
	r := Bounded(context.Background(), 50*time.Millisecond, func(context.Context) (int, error) {
		<-release // ignores its context
		return 1, nil
	})
	if el := time.Since(start); el > 50*time.Millisecond+40*time.Millisecond {
		t.Fatalf("returned after %v, budget 50ms + 40ms tolerance", el)
	}
	if r.OK || !strings.Contains(r.Reason, "50ms") {
		t.Fatalf("timeout: %+v", r)
	}
}

func TestNoticeAndAuditReadTheSame(t *testing.T) {
	d := Degradation{Feature: "Section summaries", Reason: "no answer within 300ms", Affected: 12, Unit: "sections"}
	if got := d.Notice("ABCD1234"); got != "⚠ Section summaries unavailable (no answer within 300ms); 12 sections affected [trace ABCD1234]" {
		t.Fatalf("Notice = %q", got)
	}
	if got := d.AuditReason(); !strings.HasPrefix(d.Notice(""), "⚠ "+got) {
		t.Fatalf("audit reason %q is not the notice's text", got)
	}
}
