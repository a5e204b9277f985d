package scenarios_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// rawSession is a hand-driven MCP session over plain HTTP: what a client
// with keep-alive pings, or one written against the spec alone, sends.
type rawSession struct {
	url, id string
	hc      *http.Client
}

// openRaw initializes a session by hand (initialize, then
// notifications/initialized) and returns it.
func openRaw(ctx context.Context, url string) *rawSession {
	GinkgoHelper()
	s := &rawSession{url: url, hc: harness.HTTPClient("")}
	DeferCleanup(s.hc.CloseIdleConnections)
	status, hdr, body := s.send(ctx, initBody)
	Expect(status).To(Equal(http.StatusOK), "initialize: %s", body)
	s.id = hdr.Get("Mcp-Session-Id")
	Expect(s.id).NotTo(BeEmpty(), "initialize names a session")
	status, _, body = s.send(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	Expect(status).To(Equal(http.StatusAccepted), "notifications/initialized: %s", body)
	return s
}

// send POSTs one JSON-RPC message on the session and returns the answer.
func (s *rawSession) send(ctx context.Context, msg string) (int, http.Header, []byte) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(msg))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := s.hc.Do(req)
	Expect(err).NotTo(HaveOccurred(), "%s: the proxy answered nothing", msg)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	return resp.StatusCode, resp.Header, b
}

// request sends a JSON-RPC request and decodes its JSON answer.
func (s *rawSession) request(ctx context.Context, id int, method, params string) map[string]any {
	GinkgoHelper()
	if params == "" {
		params = "{}"
	}
	status, _, b := s.send(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	Expect(status).To(Equal(http.StatusOK), "%s answered %d: %s", method, status, b)
	var m map[string]any
	Expect(json.Unmarshal(sseData(b), &m)).To(Succeed(), "%s: the answer is JSON: %s", method, b)
	Expect(m).To(HaveKeyWithValue("id", BeEquivalentTo(id)), "%s: answered on its own id", method)
	return m
}

// alive checks the proxy process still serves: /healthz answers and a
// tools/list on a new session is answered. Called after every operation.
func alive(ctx context.Context, env *harness.Env, after string) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, env.Target.URL()+"/healthz", nil)
	Expect(err).NotTo(HaveOccurred())
	hc := harness.HTTPClient("")
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred(), "after %s the proxy no longer answers /healthz: it died", after)
	_ = resp.Body.Close()
	Expect(resp.StatusCode).To(Equal(http.StatusOK), "after %s /healthz", after)
	cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
	Expect(err).NotTo(HaveOccurred(), "after %s a new session cannot be opened", after)
	defer cs.Close()
	_, err = cs.ListTools(ctx, nil)
	Expect(err).NotTo(HaveOccurred(), "after %s tools/list fails", after)
}

// surfaceSpecTimeout bounds one surface spec: a handful of loopback requests.
const surfaceSpecTimeout = 30 * time.Second

var _ = Describe("Every MCP method is answered and the proxy survives it", Label("surface", "deadline"), func() {
	for _, t := range targets {
		Context("against the "+t.name+" target", Label(t.name), func() {
			var env *harness.Env
			BeforeEach(func() { env = newWorld(harness.EnvOptions{Target: t.make()}) })

			It("answers ping and logging/setLevel sent as raw JSON-RPC on an initialized session", func(ctx SpecContext) {
				s := openRaw(ctx, env.ProjectURL())
				m := s.request(ctx, 1, "ping", "")
				Expect(m).To(HaveKey("result"), "ping: %v", m)
				alive(ctx, env, "ping")

				m = s.request(ctx, 2, "logging/setLevel", `{"level":"debug"}`)
				Expect(m).To(HaveKey("result"), "logging/setLevel: %v", m)
				alive(ctx, env, "logging/setLevel")

				m = s.request(ctx, 3, "ping", "")
				Expect(m).To(HaveKey("result"), "a second ping on the same session: %v", m)
				alive(ctx, env, "a second ping")
			}, SpecTimeout(surfaceSpecTimeout))

			It("refuses an unknown method and malformed JSON with JSON-RPC errors, and accepts notifications with 202", func(ctx SpecContext) {
				s := openRaw(ctx, env.ProjectURL())
				// The SDK refuses these before any handler runs, in plain
				// text; the client gets JSON-RPC errors with a trace code.
				for _, c := range []struct {
					msg  string
					code int
				}{
					{`{"jsonrpc":"2.0","id":7,"method":"no/such/method","params":{}}`, -32601},
					{`{"jsonrpc":"2.0","id":8,"method":`, -32700},
				} {
					status, _, b := s.send(ctx, c.msg)
					Expect(status).To(BeNumerically("<", 500), "%s is refused, not a server failure: %s", c.msg, b)
					var m map[string]any
					Expect(json.Unmarshal(b, &m)).To(Succeed(), "%s: the refusal is JSON-RPC: %s", c.msg, b)
					e, ok := m["error"].(map[string]any)
					Expect(ok).To(BeTrue(), "%s: an error object: %s", c.msg, b)
					Expect(e["code"]).To(BeEquivalentTo(c.code), "%s", c.msg)
					data, _ := e["data"].(map[string]any)
					Expect(trace.Valid(fmt.Sprint(data[trace.MetaKey]))).To(BeTrue(), "%s: error.data carries a trace code: %s", c.msg, b)
					alive(ctx, env, c.msg)
				}

				for _, n := range []string{
					`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99,"reason":"none in flight"}}`,
					`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`,
					`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`,
				} {
					status, _, b := s.send(ctx, n)
					Expect(status).To(Equal(http.StatusAccepted), "%s: %s", n, b)
					alive(ctx, env, n)
				}
			}, SpecTimeout(surfaceSpecTimeout))

			It("answers ping and logging/setLevel from the go-sdk client, with the trace code where a result may carry one", func(ctx SpecContext) {
				cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(cs.Close)
				for i := 0; i < 3; i++ {
					Expect(cs.Ping(ctx, nil)).To(Succeed())
					alive(ctx, env, "go-sdk ping")
				}
				Expect(cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})).To(Succeed())
				alive(ctx, env, "go-sdk logging/setLevel")
				res, err := cs.ListTools(ctx, nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(trace.Valid(fmt.Sprint(res.Meta[trace.MetaKey]))).To(BeTrue(), "tools/list still carries its trace code")
			}, SpecTimeout(surfaceSpecTimeout))
		})
	}
})
