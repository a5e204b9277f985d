package scenarios_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/audit"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

var alice = harness.EnvOptions{Users: map[string]string{"alice": "alice-token"}}

// post sends one raw MCP POST and decodes the JSON answer.
func post(ctx context.Context, url, token, session, body string) (int, map[string]any) {
	GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	hc := harness.HTTPClient(token)
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(json.Unmarshal(sseData(b), &m)).To(Succeed(), "body is JSON: %s", b)
	return resp.StatusCode, m
}

// sseData is the JSON of a body: the body itself, or the data of the last
// SSE event carrying one when the server answered with a stream.
func sseData(b []byte) []byte {
	var last []byte
	for _, line := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:"); ok && strings.TrimSpace(d) != "" {
			last = []byte(strings.TrimSpace(d))
		}
	}
	if last == nil {
		return b
	}
	return last
}

// jsonrpcError checks m is a JSON-RPC error quoting a trace code, and returns the code.
func jsonrpcError(m map[string]any) string {
	GinkgoHelper()
	Expect(m).To(HaveKeyWithValue("jsonrpc", "2.0"))
	e, ok := m["error"].(map[string]any)
	Expect(ok).To(BeTrue(), "body has an error object: %v", m)
	Expect(e["code"]).To(BeEquivalentTo(-32001))
	data, _ := e["data"].(map[string]any)
	code, _ := data[trace.MetaKey].(string)
	Expect(trace.Valid(code)).To(BeTrue(), "error.data carries a trace code: %v", e)
	Expect(e["message"]).To(ContainSubstring(code))
	return code
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

var _ = Describe("Every request is answered", Label("deadline"), func() {
	It("answers an unknown project with a JSON-RPC 404 body, not a bare string", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		status, m := post(ctx, env.Target.URL()+"/projects/nope/mcp", "", "", initBody)
		Expect(status).To(Equal(http.StatusNotFound))
		jsonrpcError(m)
	}, SpecTimeout(specTimeout))

	It("answers a request without a valid token to a project that requires one with a JSON-RPC 401", func(ctx SpecContext) {
		env := newWorld(alice)
		for _, tok := range []string{"", "wrong-token"} {
			status, m := post(ctx, env.ProjectURL(), tok, "", initBody)
			Expect(status).To(Equal(http.StatusUnauthorized))
			jsonrpcError(m)
		}
		status, _ := post(ctx, env.ProjectURL(), "alice-token", "", initBody)
		Expect(status).To(Equal(http.StatusOK))
	}, SpecTimeout(specTimeout))

	It("answers a non-tools/call method that fails with JSON-RPC -32001 and the trace code in error.data", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		env.DocmostLink.Down()
		_, err = cs.ListTools(ctx, nil)
		var werr *jsonrpc.Error
		Expect(errors.As(err, &werr)).To(BeTrue(), "tools/list with every upstream down is a JSON-RPC error: %v", err)
		Expect(werr.Code).To(BeEquivalentTo(-32001))
		var data map[string]string
		Expect(json.Unmarshal(werr.Data, &data)).To(Succeed())
		Expect(trace.Valid(data[trace.MetaKey])).To(BeTrue())
		Expect(werr.Message).To(ContainSubstring(data[trace.MetaKey]))
	}, SpecTimeout(specTimeout))

	It("keeps serving after a handler panic", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		Expect(harness.HandlerPanic{Tool: "docmost_update_page"}.Inject(ctx, env)).To(Succeed())
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		for i := 0; i < 3; i++ {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "x"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeTrue())
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "q"}})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.IsError).To(BeFalse(), "other tools still work after three panics")
	}, SpecTimeout(specTimeout))

	It("cancels the upstream call when the client cancels its request", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		Expect(harness.ToolHang{Tool: "search"}.Inject(ctx, env)).To(Succeed())
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		defer cancel()
		_, err = cs.CallTool(cctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "q"}})
		Expect(err).To(HaveOccurred())
		// The go-sdk client sends notifications/cancelled; the proxy must pass
		// the cancel on, well before its own upstream timeout (1 s) would.
		Eventually(func() []upstream.Call { return env.Docmost.Calls() }).WithTimeout(600 * time.Millisecond).
			Should(ContainElement(HaveField("Cancelled", BeTrue())))
		calls := env.Docmost.Calls()
		Expect(calls[0].Duration).To(BeNumerically("<", mcplocal.KnobsOf(env.Bounds()).UpstreamCallTimeout), "cancelled by the client, not by the upstream timeout")
	}, SpecTimeout(specTimeout))
})

var _ = Describe("Trace codes and the audit trail", Label("trace", "audit"), func() {
	It("gives two concurrent calls on one session their own codes, on every row", func(ctx SpecContext) {
		env := newWorld(alice)
		// Both calls are slow upstream, so each begins before the other is
		// answered: their rows are written while both are in flight.
		env.Docmost.Set("update_page", upstream.Behavior{Kind: upstream.Slow, Delay: 150 * time.Millisecond})
		env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Slow, Delay: 100 * time.Millisecond})
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "alice-token")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		codes := make([]string, 2)
		var wg sync.WaitGroup
		for i, tool := range []string{"docmost_update_page", "docmost_search"} {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"query": "a", "page_id": "b"}})
				Expect(err).NotTo(HaveOccurred())
				codes[i], _ = res.Meta[trace.MetaKey].(string)
			}()
		}
		wg.Wait()
		Expect(codes[0]).NotTo(Equal(codes[1]))
		for i, tool := range []string{"update_page", "search"} {
			Expect(trace.Valid(codes[i])).To(BeTrue())
			rows, err := mcplocal.Audit(ctx, env, codes[i])
			Expect(err).NotTo(HaveOccurred())
			Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindToolCallTrace), HaveField("Tool", "docmost_"+tool))))
			Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindUpstreamCall), HaveField("Tool", tool))))
			for _, r := range rows {
				Expect(r.CorrelationID).To(Equal(codes[i]), "row %s of %s carries its own request's code", r.Kind, tool)
				Expect(r.Tool).To(HaveSuffix(tool), "no row of one request names the other's tool")
				Expect(r.User).To(Equal("alice"))
			}
		}
	}, SpecTimeout(specTimeout))

	It("finds every row of a request by its code, nested under the tool call, none without a correlationId", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "a"}})
		Expect(err).NotTo(HaveOccurred())
		code := res.Meta[trace.MetaKey].(string)
		rows, err := mcplocal.Audit(ctx, env, code)
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(HaveLen(2))
		var root, up audit.Row
		for _, r := range rows {
			Expect(r.CorrelationID).NotTo(BeEmpty())
			switch r.Kind {
			case audit.KindToolCallTrace:
				root = r
			case audit.KindUpstreamCall:
				up = r
			}
		}
		Expect(root.ParentID).To(BeEmpty())
		Expect(up.ParentID).To(Equal(root.SpanID), "the upstream call nests under the tool call")
		Expect(up.Duration).To(BeNumerically("<=", root.Duration))
		Expect(root.SessionID).To(Equal(cs.ID()))
	}, SpecTimeout(specTimeout))

	It("renders a request's waterfall with mcpctl trace", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		env.Docmost.Set("search", upstream.Behavior{Kind: upstream.Slow, Delay: 50 * time.Millisecond})
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "a"}})
		Expect(err).NotTo(HaveOccurred())
		code := res.Meta[trace.MetaKey].(string)
		out, err := exec.CommandContext(ctx, mcpctlPath, "trace", strings.ToLower(code), "--url", env.Target.URL()).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("trace " + code))
		Expect(string(out)).To(MatchRegexp(`(?m)^tool_call_trace\s+docmost_search\s+ok`))
		Expect(string(out)).To(MatchRegexp(`(?m)^  upstream_call\s+search\s+ok`), "the upstream call nests under the tool call")
		Expect(string(out)).To(ContainSubstring("slowest: upstream_call"))
	}, SpecTimeout(specTimeout))

	It("writes a timed-out call's row with its outcome", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		Expect(harness.ToolHang{Tool: "search"}.Inject(ctx, env)).To(Succeed())
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cs.Close)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "a"}})
		Expect(err).NotTo(HaveOccurred())
		rows, err := mcplocal.Audit(ctx, env, res.Meta[trace.MetaKey].(string))
		Expect(err).NotTo(HaveOccurred())
		Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindUpstreamCall), HaveField("Status", audit.StatusTimeout))))
		Expect(rows).To(ContainElement(And(HaveField("Kind", audit.KindToolCallTrace), HaveField("Status", "error"))))
	}, SpecTimeout(specTimeout))
})

var _ = Describe("Stale sessions", Label("sessions"), func() {
	It("recreates the session for the mark3labs client too, keeping its id", func(ctx SpecContext) {
		env := newWorld(alice)
		c, err := harness.Mark3Client(ctx, env.ProjectURL(), "alice-token", "")
		Expect(err).NotTo(HaveOccurred())
		id := c.GetSessionId()
		Expect(c.Close()).To(Succeed())
		Expect(env.Target.Restart(ctx)).To(Succeed())

		c2, err := harness.Mark3Client(ctx, env.ProjectURL(), "alice-token", id)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c2.Close)
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "docmost_update_page"
		req.Params.Arguments = map[string]any{"page_id": "p"}
		res, err := c2.CallTool(ctx, req)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Content[0].(mcpgo.TextContent).Text).To(HavePrefix(catalogue.NoticePrefix))
		Expect(c2.GetSessionId()).To(Equal(id))
	}, SpecTimeout(specTimeout))

	It("answers unknown ids with a JSON-RPC 404 in strict mode", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{Strict: true})
		status, m := post(ctx, env.ProjectURL(), "", "NEVER-ISSUED-ID", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		Expect(status).To(Equal(http.StatusNotFound))
		jsonrpcError(m)
	}, SpecTimeout(specTimeout))

	It("never adopts an id its client deleted, even after a restart", func(ctx SpecContext) {
		env := newWorld(harness.EnvOptions{})
		cs, err := harness.SDKClient(ctx, env.ProjectURL(), "")
		Expect(err).NotTo(HaveOccurred())
		id := cs.ID()
		Expect(cs.Close()).To(Succeed()) // the go-sdk client's DELETE, without a body
		status, m := post(ctx, env.ProjectURL(), "", id, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		Expect(status).To(Equal(http.StatusNotFound))
		jsonrpcError(m)
	}, SpecTimeout(specTimeout))
})
