package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpchaos/mcpchaos/proxy/knobs"
	"github.com/onsi/gomega"
)

// TestConfiguredKeyWinsOverItsEnv: apiKeyEnv is read only when no apiKey
// is configured; a configured key is sent as it is.
func TestConfiguredKeyWinsOverItsEnv(t *testing.T) {
	noLeaks(t)
	s := newStub(t, answer("hi"))
	c := anthropicCfg("ant", s, "claude-sonnet-4-5")
	c.APIKey, c.APIKeyEnv = "sk-ant-configured", "ANT_KEY"
	ad := newAdapter(t, chainOf(c), knobs.Defaults(), WithGetenv(func(string) string { return "sk-ant-from-env" }))
	if _, err := ad.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if _, h, _ := s.last(); h.Get("x-api-key") != "sk-ant-configured" {
		t.Fatalf("x-api-key %q, want the configured key", h.Get("x-api-key"))
	}
}

// TestZeroOptionValuesKeepTheDefaults: WithProviderTimeout(0) and
// WithModelRefresh(0) are ignored (documented "<= 0 keeps the default"),
// not a zero cap that fails every attempt or a zero refresh that resolves
// the model on every call.
func TestZeroOptionValuesKeepTheDefaults(t *testing.T) {
	noLeaks(t)
	s := newStub(t, answer("ok"))
	ad := newAdapter(t, chainOf(openaiCfg("a", s, "m")), knobs.Defaults())
	if _, err := ad.Complete(context.Background(), hello, WithProviderTimeout(0)); err != nil {
		t.Fatalf("WithProviderTimeout(0): %v", err)
	}

	pg := &pager{list: catalogue}
	m := newStub(t, answer("ok"))
	m.models = pg.handler
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	md := newAdapter(t, chainOf(anthropicCfg("ant", m, "claude-opus-latest")), knobs.Defaults(),
		WithModelRefresh(0), withClock(func() time.Time { return now }))
	for range 2 {
		if _, err := md.Complete(context.Background(), hello); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.modelHits.Load(); n != 3 {
		t.Fatalf("/v1/models hits after two calls at one instant with WithModelRefresh(0) = %d, want 3 (one resolution of 3 pages)", n)
	}
}

// TestResolutionIsStaleAtExactlyTheRefresh: a resolution is served for
// less than the refresh interval; at exactly the interval it is resolved
// again.
func TestResolutionIsStaleAtExactlyTheRefresh(t *testing.T) {
	noLeaks(t)
	pg := &pager{list: catalogue}
	s := newStub(t, answer("ok"))
	s.models = pg.handler
	var clock atomic.Int64
	clock.Store(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	ad := newAdapter(t, chainOf(anthropicCfg("ant", s, "claude-opus-latest")), knobs.Defaults(),
		WithModelRefresh(time.Minute), withClock(func() time.Time { return time.Unix(0, clock.Load()) }))
	if _, err := ad.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	clock.Add(int64(time.Minute))
	if _, err := ad.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if n := s.modelHits.Load(); n != 6 {
		t.Fatalf("/v1/models hits at exactly the refresh = %d, want 6 (resolved again)", n)
	}
}

// TestCloseDropsIdleConnections: after Close the provider sees the
// adapter's kept-alive connection closed.
func TestCloseDropsIdleConnections(t *testing.T) {
	noLeaks(t)
	var open atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer("hi")(nil, w, r, body)
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	a, err := New(Config{Primary: "a", Providers: map[string]ProviderConfig{
		"a": {Name: "a", Kind: KindOpenAI, URL: srv.URL + "/v1", Model: "m"}}}, knobs.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Complete(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if n := open.Load(); n != 1 {
		t.Fatalf("%d connections open after one call, want 1 kept alive", n)
	}
	a.Close()
	// The server notices the close when it reads EOF, within 2 s.
	gomega.NewWithT(t).Eventually(open.Load).WithTimeout(2*time.Second).Should(gomega.BeZero(),
		"connections still open after Close")
}
