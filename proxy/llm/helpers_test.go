package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/internal/stall"
	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gleak"
)

// Timing tolerance for every "returns within X" assertion: loopback, -race,
// 2 cores. It covers the work after a bound fires (closing the connection,
// returning); the time a loaded machine does not run the test at all is
// measured (startWatch) and taken out, not folded into it.
const tolerance = 60 * time.Millisecond

// timing is a timed part of a test: its wall-clock duration and the part of
// it the machine did not run this process (internal/stall).
type timing struct{ wall, stalled time.Duration }

// watch times a part of a test and meters its stalls: the time the scheduler
// ran other processes instead of this test and the stubs and adapter it drives.
type watch struct {
	start time.Time
	m     *stall.Meter
}

func startWatch() *watch { return &watch{start: time.Now(), m: stall.Start()} }

// end stops the watch: the wall clock since startWatch and the stalls in it.
func (w *watch) end() timing {
	wall := time.Since(w.start)
	return timing{wall: wall, stalled: w.m.Stop()}
}

// betweenTimed asserts lo <= wall (a bound never fires early, whatever the
// load) and wall - stalled <= hi (late only by what the load explains).
func betweenTimed(t *testing.T, what string, tm timing, lo, hi time.Duration) {
	t.Helper()
	unstalled := tm.wall - tm.stalled
	if tm.wall < lo || unstalled > hi {
		t.Errorf("%s took %v (%v of it the machine's load, not counted), want between %v and %v (tolerance %v)",
			what, tm.wall.Round(time.Millisecond), tm.stalled.Round(time.Millisecond), lo, hi, tolerance)
	}
}

// noLeaks snapshots goroutines and, after every later-registered cleanup has
// closed servers and idle connections, waits for them to return to baseline.
// Call it first in a test.
func noLeaks(t *testing.T) {
	t.Helper()
	snap := gleak.Goroutines()
	t.Cleanup(func() {
		gomega.NewWithT(t).Eventually(gleak.Goroutines).WithTimeout(3*time.Second).
			ShouldNot(gleak.HaveLeaked(snap), "goroutines must return to baseline once servers and idle connections are closed")
	})
}

// behaviour answers one request to a stub's completion path.
type behaviour func(s *stub, w http.ResponseWriter, r *http.Request, body []byte)

// stub is a stand-in provider: it serves /v1/messages, /v1/chat/completions
// and /v1/models on loopback and counts what it sees.
type stub struct {
	srv        *httptest.Server
	complete   behaviour
	models     http.HandlerFunc
	hits       atomic.Int32 // requests to a completion path
	modelHits  atomic.Int32 // requests to /v1/models
	hungUp     atomic.Int32 // hanging requests whose client went away
	release    chan struct{}
	mu         sync.Mutex
	lastBody   []byte
	lastHeader http.Header
	lastPath   string
}

func newStub(t *testing.T, complete behaviour) *stub {
	t.Helper()
	s := &stub{complete: complete, release: make(chan struct{})}
	mux := http.NewServeMux()
	serve := func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.hits.Add(1)
		s.mu.Lock()
		s.lastBody, s.lastHeader, s.lastPath = body, r.Header.Clone(), r.URL.Path
		s.mu.Unlock()
		s.complete(s, w, r, body)
	}
	mux.HandleFunc("POST /v1/messages", serve)
	mux.HandleFunc("POST /v1/chat/completions", serve)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		s.modelHits.Add(1)
		if s.models == nil {
			http.NotFound(w, r)
			return
		}
		s.models(w, r)
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.release)
		s.srv.Close()
	})
	return s
}

func (s *stub) last() (path string, header http.Header, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = json.Unmarshal(s.lastBody, &body)
	return s.lastPath, s.lastHeader, body
}

// hang never answers; it returns when the client closes the connection (or
// the test ends).
func hang(s *stub, w http.ResponseWriter, r *http.Request, _ []byte) {
	select {
	case <-r.Context().Done():
		s.hungUp.Add(1)
	case <-s.release:
	}
}

// after answers with next once d has passed, unless the client goes away.
func after(d time.Duration, next behaviour) behaviour {
	return func(s *stub, w http.ResponseWriter, r *http.Request, body []byte) {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
			next(s, w, r, body)
		case <-r.Context().Done():
			s.hungUp.Add(1)
		case <-s.release:
		}
	}
}

func raw(status int, body string) behaviour {
	return func(_ *stub, w http.ResponseWriter, _ *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func requestedModel(body []byte) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &m)
	return m.Model
}

// answer replies in the wire format of the path it was called on, echoing
// the requested model.
func answer(text string) behaviour {
	return func(_ *stub, w http.ResponseWriter, r *http.Request, body []byte) {
		model := requestedModel(body)
		w.Header().Set("Content-Type", "application/json")
		var out any
		if r.URL.Path == "/v1/messages" {
			out = map[string]any{
				"id": "msg_1", "type": "message", "role": "assistant", "model": model,
				"content":     []map[string]any{{"type": "text", "text": text}},
				"stop_reason": "end_turn", "usage": map[string]int{"input_tokens": 3, "output_tokens": 2},
			}
		} else {
			out = map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
				"choices": []map[string]any{{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
				"usage":   map[string]int{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}

func openaiCfg(name string, s *stub, model string, fallbacks ...string) ProviderConfig {
	return ProviderConfig{Name: name, Kind: KindOpenAI, URL: s.srv.URL + "/v1", Model: model, Fallbacks: fallbacks}
}

func anthropicCfg(name string, s *stub, model string, fallbacks ...string) ProviderConfig {
	return ProviderConfig{Name: name, Kind: KindAnthropic, URL: s.srv.URL, Model: model, Fallbacks: fallbacks, APIKey: "sk-test"}
}

// chainOf makes the first provider primary.
func chainOf(ps ...ProviderConfig) Config {
	c := Config{Primary: ps[0].Name, Providers: map[string]ProviderConfig{}}
	for _, p := range ps {
		c.Providers[p.Name] = p
	}
	return c
}

func knobsWith(budget, providerTimeout time.Duration) knobs.Values {
	k := knobs.Defaults()
	k.LLMCallBudget, k.LLMProviderTimeout = budget, providerTimeout
	return k
}

func newAdapter(t *testing.T, cfg Config, k knobs.Values, opts ...AdapterOption) *Adapter {
	t.Helper()
	a, err := New(cfg, k, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

func withClock(now func() time.Time) AdapterOption {
	return func(o *adapterOptions) { o.now = now }
}

var hello = Request{System: "be brief", Messages: []Message{{Role: RoleUser, Content: "hello"}}}

func chainErr(t *testing.T, err error) *ChainError {
	t.Helper()
	var ce *ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("want *ChainError, got %T: %v", err, err)
	}
	return ce
}

func hits(ss ...*stub) string {
	out := ""
	for i, s := range ss {
		out += fmt.Sprintf("%c=%d ", 'a'+i, s.hits.Load())
	}
	return out
}
