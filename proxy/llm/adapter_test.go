package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/onsi/gomega"
)

// Three hanging providers, 200 ms per attempt, 300 ms budget: two attempts
// (200 + 100), and Complete returns at the budget, not at 3 × 200 ms.
func TestHangingChainIsBoundedByTheBudget(t *testing.T) {
	noLeaks(t)
	a, b, c := newStub(t, hang), newStub(t, hang), newStub(t, hang)
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m-a", "b", "c"), openaiCfg("b", b, "m-b"), anthropicCfg("c", c, "m-c")),
		knobsWith(300*time.Millisecond, 200*time.Millisecond))

	w := startWatch()
	_, err := ad.Complete(context.Background(), hello)
	tm := w.end()

	betweenTimed(t, "Complete against 3 hanging providers (budget 300ms)", tm, 300*time.Millisecond, 300*time.Millisecond+tolerance)
	ce := chainErr(t, err)
	if !errors.Is(err, ErrBudgetExhausted) || !errors.Is(err, context.DeadlineExceeded) || !ce.BudgetSpent {
		t.Errorf("want budget exhaustion (ErrBudgetExhausted, DeadlineExceeded, BudgetSpent), got %v (BudgetSpent=%v)", err, ce.BudgetSpent)
	}
	if len(ce.Attempts) != 2 {
		t.Fatalf("want 2 attempts (200ms + 100ms), got %d: %v", len(ce.Attempts), err)
	}
	at0, at1 := ce.Attempts[0], ce.Attempts[1]
	if at0.Provider != "a" || at0.Model != "m-a" || at0.Outcome != OutcomeTimeout || at0.Status != 0 {
		t.Errorf("attempt 1 = %+v, want a/m-a timeout status 0", at0)
	}
	// The adapter measured the attempts; the stalls of the whole call are
	// an upper bound on those in each.
	betweenTimed(t, "attempt 1 (provider timeout 200ms)", timing{at0.Duration, tm.stalled}, 200*time.Millisecond, 200*time.Millisecond+tolerance)
	if at1.Provider != "b" || at1.Model != "m-b" || at1.Outcome != OutcomeBudget || at1.Status != 0 {
		t.Errorf("attempt 2 = %+v, want b/m-b budget status 0", at1)
	}
	// Attempt 2 gets what attempt 1 left of the budget: 100 ms on an idle
	// machine; less when the load made attempt 1 or the step between them
	// late, which the stalls account for.
	left := 300*time.Millisecond - at0.Duration
	betweenTimed(t, "attempt 2 (what attempt 1 left of the budget)", timing{at1.Duration, tm.stalled}, left-tolerance-tm.stalled, 100*time.Millisecond+tolerance)
	if msg := err.Error(); !strings.Contains(msg, "a (m-a): timeout") || !strings.Contains(msg, "b (m-b): budget") {
		t.Errorf("error should name both attempts, got %q", msg)
	}
	if a.hits.Load() != 1 || b.hits.Load() != 1 || c.hits.Load() != 0 {
		t.Errorf("server hits %s, want a=1 b=1 c=0", hits(a, b, c))
	}
	// Each abandoned attempt closed its connection: the servers saw the client go.
	g := gomega.NewWithT(t)
	g.Eventually(a.hungUp.Load).Should(gomega.BeEquivalentTo(1), "a's hanging request should see its connection closed")
	g.Eventually(b.hungUp.Load).Should(gomega.BeEquivalentTo(1), "b's hanging request should see its connection closed")
}

// Fail over on every kind of real failure, not just transport.
func TestFailsOverOnRealFailures(t *testing.T) {
	refused := func() string { // a loopback port nobody listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}()
	big := strings.Repeat("é", 5000)

	cases := []struct {
		name        string
		kind        string
		model       string
		url         string // overrides the stub URL
		primary     behaviour
		wantOutcome Outcome
		wantStatus  int
		wantInDet   string
		wantInExc   string
	}{
		{name: "pinned model 404", kind: KindAnthropic, model: "claude-sonnet-4-0",
			primary:     raw(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-sonnet-4-0"},"request_id":"req_1"}`),
			wantOutcome: OutcomeStatus, wantStatus: 404, wantInDet: "not_found_error: model: claude-sonnet-4-0", wantInExc: `"not_found_error"`},
		{name: "drifted model 400", kind: KindOpenAI, model: "qwen3-32b",
			primary:     raw(400, `{"error":{"message":"The model qwen3-32b does not exist.","type":"invalid_request_error","param":"model","code":"model_not_found"}}`),
			wantOutcome: OutcomeStatus, wantStatus: 400, wantInDet: "invalid_request_error"},
		{name: "overloaded 529", kind: KindAnthropic, model: "claude-x",
			primary:     raw(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			wantOutcome: OutcomeStatus, wantStatus: 529, wantInDet: "overloaded_error"},
		{name: "redirect is not followed", kind: KindOpenAI, model: "m",
			primary:     raw(307, ``),
			wantOutcome: OutcomeStatus, wantStatus: 307},
		{name: "empty completion openai", kind: KindOpenAI, model: "m", primary: answer("  \n"),
			wantOutcome: OutcomeEmpty, wantStatus: 200, wantInDet: "empty completion"},
		{name: "empty completion anthropic", kind: KindAnthropic, model: "claude-x", primary: answer(""),
			wantOutcome: OutcomeEmpty, wantStatus: 200, wantInDet: "empty completion"},
		{name: "thinking model with null content", kind: KindOpenAI, model: "m",
			primary:     raw(200, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"hmm"},"finish_reason":"length"}]}`),
			wantOutcome: OutcomeEmpty, wantStatus: 200, wantInDet: `finish_reason "length"`},
		{name: "no choices", kind: KindOpenAI, model: "m", primary: raw(200, `{"object":"chat.completion","choices":[]}`),
			wantOutcome: OutcomeEmpty, wantStatus: 200, wantInDet: "no choices"},
		{name: "malformed JSON openai", kind: KindOpenAI, model: "m", primary: raw(200, `{"choices":[{"message":{"content":"hal`),
			wantOutcome: OutcomeInvalid, wantStatus: 200, wantInDet: "malformed JSON", wantInExc: `{"choices":[{"message":{"content":"hal`},
		{name: "malformed JSON anthropic", kind: KindAnthropic, model: "claude-x", primary: raw(200, `<html>bad gateway</html>`),
			wantOutcome: OutcomeInvalid, wantStatus: 200, wantInDet: "malformed JSON", wantInExc: "<html>bad gateway</html>"},
		{name: "error envelope in a 200", kind: KindAnthropic, model: "claude-x",
			primary:     raw(200, `{"type":"error","error":{"type":"api_error","message":"boom"}}`),
			wantOutcome: OutcomeInvalid, wantStatus: 200, wantInDet: "api_error: boom"},
		{name: "connection refused", kind: KindOpenAI, model: "m", url: refused + "/v1", primary: hang,
			wantOutcome: OutcomeTransport, wantStatus: 0, wantInDet: "refused"},
		{name: "huge error body is excerpted", kind: KindOpenAI, model: "m", primary: raw(500, big),
			wantOutcome: OutcomeStatus, wantStatus: 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			noLeaks(t)
			p, fb := newStub(t, tc.primary), newStub(t, answer("from the fallback"))
			pc := openaiCfg("primary", p, tc.model, "fallback")
			if tc.kind == KindAnthropic {
				pc = anthropicCfg("primary", p, tc.model, "fallback")
			}
			if tc.url != "" {
				pc.URL = tc.url
			}
			ad := newAdapter(t, chainOf(pc, anthropicCfg("fallback", fb, "claude-fallback-1")), knobsWith(2*time.Second, time.Second))

			resp, err := ad.Complete(context.Background(), hello)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text != "from the fallback" || resp.Provider != "fallback" || resp.Model != "claude-fallback-1" || !resp.FailedOver {
				t.Errorf("response %+v, want fallback/claude-fallback-1 FailedOver", resp)
			}
			if len(resp.Attempts) != 2 {
				t.Fatalf("want 2 attempts, got %+v", resp.Attempts)
			}
			a0 := resp.Attempts[0]
			if a0.Provider != "primary" || a0.Model != tc.model || a0.Outcome != tc.wantOutcome || a0.Status != tc.wantStatus {
				t.Errorf("attempt 1 = %+v, want primary/%s %s status %d", a0, tc.model, tc.wantOutcome, tc.wantStatus)
			}
			if !strings.Contains(a0.Detail, tc.wantInDet) {
				t.Errorf("attempt 1 detail %q, want it to contain %q", a0.Detail, tc.wantInDet)
			}
			if !strings.Contains(a0.Excerpt, tc.wantInExc) {
				t.Errorf("attempt 1 excerpt %q, want it to contain %q", a0.Excerpt, tc.wantInExc)
			}
			if len(a0.Excerpt) > 200 || !utf8.ValidString(a0.Excerpt) {
				t.Errorf("excerpt must be <= 200 bytes of valid UTF-8, got %d bytes", len(a0.Excerpt))
			}
			if a1 := resp.Attempts[1]; a1.Outcome != OutcomeOK || a1.Provider != "fallback" || a1.Status != 200 {
				t.Errorf("attempt 2 = %+v, want fallback ok 200", a1)
			}
		})
	}
}

// When every provider fails with budget to spare, the error names them all.
func TestExhaustedChainNamesEveryAttempt(t *testing.T) {
	noLeaks(t)
	a := newStub(t, raw(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-gone-1"}}`))
	b := newStub(t, raw(503, `upstream down`))
	ad := newAdapter(t, chainOf(anthropicCfg("a", a, "claude-gone-1", "b"), openaiCfg("b", b, "qwen")), knobsWith(2*time.Second, time.Second))

	_, err := ad.Complete(context.Background(), hello)
	ce := chainErr(t, err)
	if !errors.Is(err, ErrChainExhausted) || ce.BudgetSpent {
		t.Errorf("want ErrChainExhausted without BudgetSpent, got %v", err)
	}
	if len(ce.Attempts) != 2 || ce.Attempts[0].Status != 404 || ce.Attempts[0].Model != "claude-gone-1" || ce.Attempts[1].Status != 503 {
		t.Errorf("attempts %+v, want 404 claude-gone-1 then 503", ce.Attempts)
	}
	for _, want := range []string{"a (claude-gone-1): HTTP 404", "b (qwen): HTTP 503"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q should contain %q", err, want)
		}
	}
	if r := ce.Reason(); !strings.Contains(r, "b (qwen) HTTP 503") {
		t.Errorf("Reason() = %q, want the last model and status", r)
	}
}

// A caller's cancel stops the chain at once: Complete returns promptly and no
// further attempt starts.
func TestCallerCancelStopsTheChain(t *testing.T) {
	noLeaks(t)
	a, b, c := newStub(t, hang), newStub(t, hang), newStub(t, hang)
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m", "b", "c"), openaiCfg("b", b, "m"), openaiCfg("c", c, "m")), knobs.Defaults())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The promise is "promptly after the cancel": timed from when the
	// cancel happened, not from when it was asked for (a loaded machine
	// runs the timer late, and that is not the adapter's doing).
	cancelled := make(chan *watch, 1)
	start := time.Now()
	timer := time.AfterFunc(50*time.Millisecond, func() {
		cancelled <- startWatch()
		cancel()
	})
	defer timer.Stop()
	_, err := ad.Complete(ctx, hello)
	el := time.Since(start)

	if el < 50*time.Millisecond {
		t.Errorf("Complete returned after %v, before the cancel at 50ms", el)
	}
	select {
	case w := <-cancelled:
		betweenTimed(t, "Complete after the cancel", w.end(), 0, tolerance)
	default:
		t.Errorf("Complete returned after %v, and the cancel never happened", el)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("want an error wrapping context.Canceled, got %v", err)
	}
	ce := chainErr(t, err)
	if len(ce.Attempts) != 1 || ce.Attempts[0].Outcome != OutcomeCanceled || ce.BudgetSpent {
		t.Errorf("want one cancelled attempt and no budget exhaustion, got %+v", ce)
	}
	if r := ce.Reason(); r != "request cancelled" {
		t.Errorf("Reason() = %q", r)
	}
	if a.hits.Load() != 1 || b.hits.Load()+c.hits.Load() != 0 {
		t.Errorf("server hits %s, want only a=1: no attempt may start after the cancel", hits(a, b, c))
	}
	gomega.NewWithT(t).Eventually(a.hungUp.Load).Should(gomega.BeEquivalentTo(1), "the cancelled attempt should close its connection")
}

func TestAlreadyCancelledStartsNothing(t *testing.T) {
	noLeaks(t)
	a := newStub(t, answer("x"))
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m")), knobs.Defaults())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ad.Complete(ctx, hello)
	if !errors.Is(err, context.Canceled) || len(chainErr(t, err).Attempts) != 0 || a.hits.Load() != 0 {
		t.Errorf("want Canceled with no attempt and no hit, got %v, hits %d", err, a.hits.Load())
	}
}

// Slow failures eat the budget across the chain: 150 + 150 + the 100 left.
func TestBudgetSpentAcrossSlowProviders(t *testing.T) {
	noLeaks(t)
	slow500 := after(150*time.Millisecond, raw(500, `{"error":{"message":"slow and broken","type":"server_error"}}`))
	a, b, c := newStub(t, slow500), newStub(t, slow500), newStub(t, slow500)
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m-a", "b"), openaiCfg("b", b, "m-b", "c"), anthropicCfg("c", c, "claude-c")),
		knobsWith(400*time.Millisecond, time.Second))

	w := startWatch()
	_, err := ad.Complete(context.Background(), hello)
	tm := w.end()

	betweenTimed(t, "Complete across slow failing providers (budget 400ms)", tm, 400*time.Millisecond, 400*time.Millisecond+tolerance)
	ce := chainErr(t, err)
	if !errors.Is(err, ErrBudgetExhausted) || !ce.BudgetSpent {
		t.Fatalf("want budget exhaustion, got %v", err)
	}
	// On an idle machine: a and b fail after 150 ms each and c gets the
	// 100 ms left. A loaded machine can make a and b late enough that the
	// budget ends during b: then b is cut by the budget, c never starts, and
	// the two attempts must have spent the whole budget between them.
	n := len(ce.Attempts)
	if n == 2 && ce.Attempts[0].Duration+ce.Attempts[1].Duration < 400*time.Millisecond-tolerance {
		t.Fatalf("the chain stopped after 2 attempts with budget left: %v", err)
	}
	if n != 3 && n != 2 {
		t.Fatalf("want 3 attempts (or 2 when the load spent the budget in b), got %v", err)
	}
	for i, want := range []struct {
		p      string
		out    Outcome
		status int
	}{{"a", OutcomeStatus, 500}, {"b", OutcomeStatus, 500}, {"c", OutcomeBudget, 0}}[:n] {
		if i == n-1 {
			want.out, want.status = OutcomeBudget, 0
		}
		if at := ce.Attempts[i]; at.Provider != want.p || at.Outcome != want.out || at.Status != want.status {
			t.Errorf("attempt %d = %+v, want %s %s %d", i+1, at, want.p, want.out, want.status)
		}
	}
	betweenTimed(t, "attempt 1 (server answers 500 after 150ms)", timing{ce.Attempts[0].Duration, tm.stalled}, 150*time.Millisecond, 150*time.Millisecond+tolerance)
	if c.hits.Load() != int32(n-2) {
		t.Errorf("c should have been tried once with what was left (unless the budget ended in b), hits %s", hits(a, b, c))
	}
	if r, want := ce.Reason(), fmt.Sprintf("LLM budget 400ms spent after %d attempt(s)", n); r != want {
		t.Errorf("Reason() = %q, want %q", r, want)
	}
}

// The caller's own deadline, when earlier than the budget, is the bound.
func TestCallerDeadlineEarlierThanBudget(t *testing.T) {
	noLeaks(t)
	a := newStub(t, hang)
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m")), knobs.Defaults())
	w := startWatch()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := ad.Complete(ctx, hello)
	betweenTimed(t, "Complete under a 100ms caller deadline", w.end(), 100*time.Millisecond, 100*time.Millisecond+tolerance)
	ce := chainErr(t, err)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrBudgetExhausted) || !ce.BudgetSpent {
		t.Errorf("want the caller's DeadlineExceeded (not our budget), BudgetSpent; got %v", err)
	}
	if ce.Attempts[0].Outcome != OutcomeBudget {
		t.Errorf("attempt %+v, want outcome budget", ce.Attempts[0])
	}
}

// Per-call options override both knobs for one call.
func TestPerCallOptions(t *testing.T) {
	noLeaks(t)
	a, b := newStub(t, hang), newStub(t, hang)
	ad := newAdapter(t, chainOf(openaiCfg("a", a, "m", "b"), openaiCfg("b", b, "m")), knobs.Defaults())

	w := startWatch()
	_, err := ad.Complete(context.Background(), hello, WithBudget(150*time.Millisecond), WithProviderTimeout(100*time.Millisecond), WithBudget(0))
	betweenTimed(t, "Complete with WithBudget(150ms)", w.end(), 150*time.Millisecond, 150*time.Millisecond+tolerance)
	ce := chainErr(t, err)
	if len(ce.Attempts) != 2 || ce.Attempts[0].Outcome != OutcomeTimeout || ce.Attempts[1].Outcome != OutcomeBudget || ce.Budget != 150*time.Millisecond {
		t.Errorf("want timeout(100ms) then budget under a 150ms budget, got %v", err)
	}
}

// The wire formats: paths, headers and bodies each provider sends.
func TestWireFormats(t *testing.T) {
	noLeaks(t)
	ant, oai, oaiNoKey := newStub(t, answer("hi from claude")), newStub(t, answer("hi from vllm")), newStub(t, answer("hi"))
	env := map[string]string{"ANT_KEY": "sk-ant-123", "OAI_KEY": "sk-oai-456"}
	ac := anthropicCfg("ant", ant, "claude-sonnet-4-5")
	ac.APIKey, ac.APIKeyEnv = "", "ANT_KEY"
	oc := openaiCfg("oai", oai, "qwen3-32b")
	oc.APIKeyEnv = "OAI_KEY"
	ad := newAdapter(t, chainOf(ac), knobs.Defaults(), WithGetenv(func(k string) string { return env[k] }))
	od := newAdapter(t, chainOf(oc), knobs.Defaults(), WithGetenv(func(k string) string { return env[k] }))
	nd := newAdapter(t, chainOf(openaiCfg("nokey", oaiNoKey, "m")), knobs.Defaults())

	temp := 0.25
	req := Request{System: "sys", Messages: []Message{{RoleUser, "q1"}, {RoleAssistant, "a1"}, {RoleSystem, "extra"}, {RoleUser, "q2"}}, Temperature: &temp}

	resp, err := ad.Complete(context.Background(), req)
	if err != nil || resp.Text != "hi from claude" || resp.Provider != "ant" || resp.Model != "claude-sonnet-4-5" || resp.FailedOver {
		t.Fatalf("anthropic: %+v, %v", resp, err)
	}
	path, h, body := ant.last()
	if path != "/v1/messages" || h.Get("x-api-key") != "sk-ant-123" || h.Get("anthropic-version") != "2023-06-01" || h.Get("Authorization") != "" {
		t.Errorf("anthropic request: path %s headers %v", path, h)
	}
	if body["model"] != "claude-sonnet-4-5" || body["max_tokens"] != float64(1024) || body["system"] != "sys\n\nextra" || body["temperature"] != 0.25 {
		t.Errorf("anthropic body %v", body)
	}
	if msgs, _ := body["messages"].([]any); len(msgs) != 3 {
		t.Errorf("anthropic messages %v, want 3 (system folded out)", body["messages"])
	}

	req.MaxTokens = 64
	resp, err = od.Complete(context.Background(), req)
	if err != nil || resp.Text != "hi from vllm" || resp.Model != "qwen3-32b" {
		t.Fatalf("openai: %+v, %v", resp, err)
	}
	path, h, body = oai.last()
	if path != "/v1/chat/completions" || h.Get("Authorization") != "Bearer sk-oai-456" || h.Get("x-api-key") != "" {
		t.Errorf("openai request: path %s headers %v", path, h)
	}
	msgs, _ := body["messages"].([]any)
	if body["model"] != "qwen3-32b" || body["max_tokens"] != float64(64) || body["stream"] != false || len(msgs) != 5 {
		t.Errorf("openai body %v", body)
	} else if first, _ := msgs[0].(map[string]any); first["role"] != "system" || first["content"] != "sys" {
		t.Errorf("openai: system prompt should be the first message, got %v", msgs[0])
	}

	if _, err := nd.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if _, h, _ := oaiNoKey.last(); h.Get("Authorization") != "" {
		t.Errorf("no key configured: no Authorization header, got %q", h.Get("Authorization"))
	}
}

func TestRequestAndAdapterEdges(t *testing.T) {
	var nilAdapter *Adapter
	if _, err := nilAdapter.Complete(context.Background(), hello); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("nil adapter: %v, want ErrNotConfigured", err)
	}
	if nilAdapter.Chain() != nil {
		t.Error("nil adapter has no chain")
	}
	nilAdapter.Close()
	if _, err := New(Config{}, knobs.Defaults()); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("empty config: %v, want ErrNotConfigured", err)
	}

	ad, err := New(Config{Primary: "p", Providers: map[string]ProviderConfig{"p": {Kind: KindOpenAI, URL: "http://127.0.0.1:1/v1", Model: "m"}}}, knobs.Values{})
	if err != nil {
		t.Fatal(err)
	}
	defer ad.Close()
	def := knobs.Defaults()
	if ad.budget != def.LLMCallBudget || ad.providerTimeout != def.LLMProviderTimeout {
		t.Errorf("zero knobs must mean the defaults, got budget %v timeout %v", ad.budget, ad.providerTimeout)
	}
	if _, err := ad.Complete(context.Background(), Request{}); err == nil || errors.As(err, new(*ChainError)) {
		t.Errorf("a request without messages is the caller's bug, not a chain failure: %v", err)
	}
	if _, err := ad.Complete(context.Background(), Request{Messages: []Message{{"tool", "x"}}}); err == nil {
		t.Error("unknown role should be rejected")
	}
}

func TestExcerpt(t *testing.T) {
	for _, in := range []string{"", "short", strings.Repeat("a", 1000), strings.Repeat("日本", 300), "bad \xff\xfe utf8 " + strings.Repeat("x", 300), "multi\n\n  line\tbody"} {
		got := excerpt([]byte(in))
		if len(got) > 200 || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\t") {
			t.Errorf("excerpt(%.20q...) = %d bytes %q", in, len(got), got)
		}
	}
	if got := excerpt([]byte("multi\n\n  line")); got != "multi line" {
		t.Errorf("got %q", got)
	}
}
