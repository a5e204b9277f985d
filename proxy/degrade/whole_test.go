package degrade

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
)

// TestNoticeAndAuditReasonWholeShape: the whole text of both renderings,
// with and without an affected count (a count of 0 is no count).
func TestNoticeAndAuditReasonWholeShape(t *testing.T) {
	for _, c := range []struct {
		d             Degradation
		notice, audit string
	}{
		{Degradation{Feature: "Smart page titles", Reason: "LLM down"},
			"⚠ Smart page titles unavailable (LLM down) [trace ABCD1234]", "Smart page titles unavailable (LLM down)"},
		{Degradation{Feature: "Section summaries", Reason: "r", Affected: 1, Unit: "sections"},
			"⚠ Section summaries unavailable (r); 1 sections affected [trace ABCD1234]", "Section summaries unavailable (r); 1 sections affected"},
	} {
		if got := c.d.Notice("ABCD1234"); got != c.notice {
			t.Errorf("Notice = %q, want %q", got, c.notice)
		}
		if got := c.d.Notice(""); got != "⚠ "+c.audit {
			t.Errorf("Notice without a code = %q, want %q", got, "⚠ "+c.audit)
		}
		if got := c.d.AuditReason(); got != c.audit {
			t.Errorf("AuditReason = %q, want %q", got, c.audit)
		}
	}
}

// TestReasonIsCutOnlyPast200Bytes: a reason of 200 bytes is kept whole; one
// byte more is cut there and marked.
func TestReasonIsCutOnlyPast200Bytes(t *testing.T) {
	exact := strings.Repeat("x", 200)
	if got := reason(errors.New(exact), time.Second); got != exact {
		t.Fatalf("a 200-byte reason was changed: %q", got)
	}
	if got := reason(errors.New(exact+"y"), time.Second); got != exact+"…" {
		t.Fatalf("a 201-byte reason: %q, want 200 bytes and …", got)
	}
}

// TestAskWithoutRecorderGivesTheChainsReason: recording attempts is
// optional; without a recorder a failed chain still reports its own reason.
func TestAskWithoutRecorderGivesTheChainsReason(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: every attempt is refused at once
	a, err := llm.New(llm.Config{Primary: "p", Providers: map[string]llm.ProviderConfig{
		"p": {Kind: llm.KindOpenAI, URL: "http://" + addr + "/v1", Model: "m"},
	}}, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	r := Ask(context.Background(), a, 5*time.Second, llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
	if r.OK || !strings.Contains(r.Reason, "LLM provider(s) failed") {
		t.Fatalf("reason %q, want the chain's", r.Reason)
	}
}
