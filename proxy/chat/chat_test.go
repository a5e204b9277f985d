package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/mcpchaos/mcpchaos/proxy/llm"
	"github.com/mcpchaos/mcpchaos/proxy/llm/llmtest"
)

// rows is an audit sink that keeps what it is given.
type rows struct {
	mu   sync.Mutex
	rows []audit.Row
}

func (s *rows) Record(r audit.Row) { s.mu.Lock(); s.rows = append(s.rows, r); s.mu.Unlock() }

func (s *rows) all() []audit.Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]audit.Row(nil), s.rows...)
}

func newAdapter(t *testing.T, cfg llm.Config) *llm.Adapter {
	t.Helper()
	a, err := llm.New(cfg, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// twoProviders: "first" answers with firstStatus (0: a text), "second" with a
// text; first falls back to second.
func twoProviders(t *testing.T, firstStatus int) *llm.Adapter {
	t.Helper()
	first := llmtest.New(llmtest.Answer{Status: firstStatus, Text: "from first"})
	second := llmtest.New(llmtest.Answer{Text: "from second"})
	t.Cleanup(first.Close)
	t.Cleanup(second.Close)
	return newAdapter(t, llm.Config{Primary: "first", Providers: map[string]llm.ProviderConfig{
		"first":  {Kind: llm.KindOpenAI, URL: first.BaseURL(), Model: "m1", APIKey: "k", Fallbacks: []string{"second"}},
		"second": {Kind: llm.KindOpenAI, URL: second.BaseURL(), Model: "m2", APIKey: "k"},
	}})
}

func post(h http.Handler, body string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/chat", strings.NewReader(body))
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// decode decodes the JSON body of w.
func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %q: %v", w.Body.String(), err)
	}
	return v
}

const hi = `{"messages":[{"role":"user","content":"hi"}]}`

// TestChatRefusalsWholeShape: each refusal has its status, its whole error
// text and a trace code, and a refused turn writes no audit row.
func TestChatRefusalsWholeShape(t *testing.T) {
	sink := &rows{}
	auth := func(r *http.Request) (string, bool) {
		u := r.Header.Get("X-User")
		return u, u != ""
	}
	withLLM := &Handler{LLM: twoProviders(t, 0), Audit: sink, Authenticate: auth, Budget: 5 * time.Second}
	noLLM := &Handler{Audit: sink}
	for _, c := range []struct {
		name   string
		h      *Handler
		body   string
		header []string
		status int
		err    string
	}{
		{"no user", withLLM, hi, nil, 401, "chat requires a bearer token (Authorization: Bearer <token>)"},
		{"not JSON", withLLM, "{", []string{"X-User", "ann"}, 400, `want {"messages": [{"role": "user", "content": "..."}], "stream": false}: unexpected EOF`},
		{"no messages", withLLM, `{"messages":[]}`, []string{"X-User", "ann"}, 400, `want {"messages": [{"role": "user", "content": "..."}], "stream": false}: <nil>`},
		{"no LLM", noLLM, hi, nil, 503, "no LLM is configured on this proxy (llm: in its config)"},
	} {
		w := post(c.h, c.body, c.header...)
		f := decode[Failure](t, w)
		if w.Code != c.status || f.Error != c.err || len(f.TraceCode) == 0 || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %q %+v, want %d and %q with a trace code", c.name, w.Code, w.Header().Get("Content-Type"), f, c.status, c.err)
		}
	}
	if got := sink.all(); len(got) != 0 {
		t.Errorf("refused turns wrote audit rows: %+v", got)
	}
}

// TestChatAnswerAndItsAuditRowsWholeShape: an answer names the model that
// answered and whether it failed over; the turn's row carries the user, the
// answering provider and model, and one llm_attempt row per attempt follows.
func TestChatAnswerAndItsAuditRowsWholeShape(t *testing.T) {
	for _, c := range []struct {
		name        string
		firstStatus int
		want        Result
		detail      string
		attempts    int
	}{
		{"primary answers", 0, Result{Text: "from first", LLM: "first", Model: "m1"}, "m1", 1},
		{"failed over", 500, Result{Text: "from second", LLM: "second", Model: "m2", FailedOver: true}, "m2 (failed over)", 2},
	} {
		sink := &rows{}
		h := &Handler{LLM: twoProviders(t, c.firstStatus), Audit: sink, Budget: 5 * time.Second,
			Authenticate: func(*http.Request) (string, bool) { return "ann", true }}
		w := post(h, hi)
		got := decode[Result](t, w)
		c.want.TraceCode = got.TraceCode
		if w.Code != 200 || got != c.want || got.TraceCode == "" {
			t.Errorf("%s: %d %+v, want 200 %+v", c.name, w.Code, got, c.want)
		}
		all := sink.all()
		if len(all) != 1+c.attempts {
			t.Fatalf("%s: %d rows, want the turn and %d attempts: %+v", c.name, len(all), c.attempts, all)
		}
		turn := all[0]
		if turn.Kind != audit.KindChatTurn || turn.Status != audit.StatusOK || turn.User != "ann" || turn.Tool != "chat" ||
			turn.Server != c.want.LLM || turn.Detail != c.detail || turn.CorrelationID != got.TraceCode || turn.SpanID == "" || turn.Duration <= 0 {
			t.Errorf("%s: turn row %+v", c.name, turn)
		}
		for _, r := range all[1:] {
			if r.Kind != audit.KindLLMAttempt || r.ParentID != turn.SpanID || r.CorrelationID != got.TraceCode {
				t.Errorf("%s: attempt row %+v", c.name, r)
			}
		}
	}
}

// TestChatFailureIsExplainedAndAudited: when every candidate fails, the answer
// is 502 with Explain's text, and the turn's row is an error with the same
// text, followed by the attempts.
func TestChatFailureIsExplainedAndAudited(t *testing.T) {
	f := llmtest.New(llmtest.Answer{Status: 500})
	defer f.Close()
	sink := &rows{}
	h := &Handler{LLM: newAdapter(t, llm.Config{Primary: "only", Providers: map[string]llm.ProviderConfig{
		"only": {Kind: llm.KindOpenAI, URL: f.BaseURL(), Model: "m", APIKey: "k"}}}), Audit: sink, Budget: 5 * time.Second}
	w := post(h, hi)
	got := decode[Failure](t, w)
	want := `1 candidate(s) failed; last: only (m) HTTP 500: {"error":{"code":null,"message":"Internal Server Error","param":null,"type":"server_error"}}`
	if w.Code != 502 || got.Error != want || got.TraceCode == "" {
		t.Errorf("%d %+v, want 502 %q", w.Code, got, want)
	}
	all := sink.all()
	if len(all) != 2 || all[0].Status != audit.StatusError || all[0].Detail != want || all[0].Server != "" || all[1].Kind != audit.KindLLMAttempt {
		t.Errorf("rows %+v", all)
	}
}

// sseProvider answers every OpenAI streaming request with the chunks, then
// [DONE] when done is true (else the stream just ends).
func sseProvider(t *testing.T, chunks []string, done bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			b, _ := json.Marshal(map[string]any{"model": "served-m", "choices": []map[string]any{{"delta": map[string]string{"content": c}}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if done {
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestChatStreamWholeShape: a streamed turn is chunk events then one done
// event (no text) or, when the stream broke after a chunk, one error event.
func TestChatStreamWholeShape(t *testing.T) {
	for _, c := range []struct {
		name   string
		done   bool
		events []string
		status string
	}{
		{"whole", true, []string{`chunk {"text":"Hel"}`, `chunk {"text":"lo"}`, `done {"llm":"s","model":"served-m","failedOver":false,"traceCode":"CODE"}`}, audit.StatusOK},
		{"broken", false, []string{`chunk {"text":"Hel"}`, `chunk {"text":"lo"}`,
			`error {"error":"the answer from s (served-m) broke off mid-stream (HTTP 200); not failing over once part of an answer was sent: the stream ended without [DONE] after 5 bytes: truncated","traceCode":"CODE"}`}, audit.StatusError},
	} {
		sink := &rows{}
		h := &Handler{LLM: newAdapter(t, llm.Config{Primary: "s", Providers: map[string]llm.ProviderConfig{
			"s": {Kind: llm.KindOpenAI, URL: sseProvider(t, []string{"Hel", "lo"}, c.done), Model: "m", APIKey: "k"}}}), Audit: sink, Budget: 5 * time.Second}
		w := post(h, `{"messages":[{"role":"user","content":"hi"}],"stream":true}`)
		all := sink.all()
		if len(all) == 0 {
			t.Fatalf("%s: no audit row", c.name)
		}
		var got []string
		for _, ev := range strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n") {
			name, data, _ := strings.Cut(strings.TrimPrefix(ev, "event: "), "\ndata: ")
			got = append(got, name+" "+strings.ReplaceAll(data, all[0].CorrelationID, "CODE"))
		}
		if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" || w.Header().Get("Cache-Control") != "no-cache" ||
			strings.Join(got, "\n") != strings.Join(c.events, "\n") || !w.Flushed {
			t.Errorf("%s: %d %v flushed=%v\n got %q\nwant %q", c.name, w.Code, w.Header(), w.Flushed, got, c.events)
		}
		if all[0].Status != c.status {
			t.Errorf("%s: turn row %+v", c.name, all[0])
		}
	}
}

// TestExplainWholeShape: Explain's whole text for each shape of failure.
func TestExplainWholeShape(t *testing.T) {
	status := llm.Attempt{Provider: "a", Model: "ma", Outcome: llm.OutcomeStatus, Status: 503, Excerpt: "busy", Detail: "d"}
	timeout := llm.Attempt{Provider: "b", Model: "mb", Outcome: llm.OutcomeTimeout, Detail: "no answer in 1s"}
	bare := llm.Attempt{Provider: "c", Model: "mc", Outcome: llm.OutcomeTransport}
	gated := func(p string) llm.Attempt {
		return llm.Attempt{Provider: p, Model: "mg", Outcome: llm.OutcomeStatus, Status: 429, OAuthGated: true}
	}
	plain := errors.New("plain failure")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"not a chain error", plain, "plain failure"},
		{"no attempts", &llm.ChainError{Err: llm.ErrChainExhausted}, (&llm.ChainError{Err: llm.ErrChainExhausted}).Error()},
		{"status with excerpt", &llm.ChainError{Attempts: []llm.Attempt{timeout, status}, Err: llm.ErrChainExhausted},
			"2 candidate(s) failed; last: a (ma) HTTP 503: busy"},
		{"timeout with detail", &llm.ChainError{Attempts: []llm.Attempt{status, timeout}, Err: llm.ErrChainExhausted},
			"2 candidate(s) failed; last: b (mb) timeout: no answer in 1s"},
		{"neither", &llm.ChainError{Attempts: []llm.Attempt{bare}, Err: llm.ErrChainExhausted},
			"1 candidate(s) failed; last: c (mc) transport"},
		{"stream broken", &llm.ChainError{Attempts: []llm.Attempt{timeout}, Err: llm.ErrStreamBroken},
			"the answer from b (mb) broke off mid-stream (timeout); not failing over once part of an answer was sent: no answer in 1s"},
		{"gated first, then others", &llm.ChainError{Attempts: []llm.Attempt{gated("g1"), gated("g2"), bare}, Err: llm.ErrChainExhausted},
			"3 candidate(s) failed; last: c (mc) transport; g2 (mg): " + llm.OAuthGatedHint},
		{"gated is the first only", &llm.ChainError{Attempts: []llm.Attempt{gated("g1"), bare}, Err: llm.ErrChainExhausted},
			"2 candidate(s) failed; last: c (mc) transport; g1 (mg): " + llm.OAuthGatedHint},
	} {
		if got := Explain(c.err); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestChatStreamReachesTheClientAsItComes: the stream's headers reach the
// client before the LLM sends anything, and each chunk before the next one
// is produced (flushed, not buffered until the end).
func TestChatStreamReachesTheClientAsItComes(t *testing.T) {
	const wait = 2 * time.Second // each step's bound; a buffered stream misses it
	headersSeen, chunkSeen := make(chan struct{}), make(chan struct{})
	var headersFirst, chunkFirst atomic.Bool
	llmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		select {
		case <-headersSeen:
			headersFirst.Store(true)
		case <-time.After(wait):
		}
		fmt.Fprint(w, `data: {"model":"m","choices":[{"delta":{"content":"Hel"}}]}`+"\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-chunkSeen:
			chunkFirst.Store(true)
		case <-time.After(wait):
		}
		fmt.Fprint(w, `data: {"model":"m","choices":[{"delta":{"content":"lo"}}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer llmSrv.Close()
	h := &Handler{LLM: newAdapter(t, llm.Config{Primary: "s", Providers: map[string]llm.ProviderConfig{
		"s": {Kind: llm.KindOpenAI, URL: llmSrv.URL + "/v1", Model: "m", APIKey: "k"}}}), Budget: 10 * time.Second}
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	resp, err := http.Post(proxy.URL, "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	close(headersSeen)
	buf := make([]byte, 0, 4096)
	for !strings.Contains(string(buf), `"Hel"`) {
		tmp := make([]byte, 512)
		n, err := resp.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			break
		}
	}
	close(chunkSeen)
	rest, _ := io.ReadAll(resp.Body)
	all := string(buf) + string(rest)
	if !headersFirst.Load() || !chunkFirst.Load() || !strings.Contains(all, "event: done") {
		t.Fatalf("headers before the LLM: %v, first chunk before the second: %v; stream %q", headersFirst.Load(), chunkFirst.Load(), all)
	}
}
