package scenarios_test

import (
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/upstream"
	"github.com/mcpchaos/mcpchaos/proxy/trace"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

var _ = Describe("A request through the proxy", Label("foundation"), func() {
	var env *harness.Env
	BeforeEach(func() { env = newWorld(harness.EnvOptions{}) })

	Context("with the official go-sdk client", func() {
		var cs *mcp.ClientSession
		BeforeEach(func(ctx SpecContext) {
			var err error
			cs, err = harness.SDKClient(ctx, env.ProjectURL(), "")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(cs.Close)
		})

		It("lists the upstream's tools prefixed with the server name", func(ctx SpecContext) {
			res, err := cs.ListTools(ctx, nil)
			Expect(err).NotTo(HaveOccurred())
			var names []string
			for _, t := range res.Tools {
				names = append(names, t.Name)
			}
			Expect(names).To(ConsistOf("docmost_search", "docmost_update_page"))
		}, SpecTimeout(specTimeout))

		It("forwards docmost_search and returns the upstream's whole result with a trace code", func(ctx SpecContext) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "backup"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeFalse())
			Expect(textOf(res)).To(Equal(upstream.SearchText("backup")))
			Expect(len(textOf(res))).To(BeNumerically(">", 12_000), "search must be large enough to paginate")
			Expect(trace.Valid(res.Meta[trace.MetaKey].(string))).To(BeTrue(), "result _meta carries a trace code")
		}, SpecTimeout(specTimeout))

		It("forwards docmost_update_page and returns its small ack", func(ctx SpecContext) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": "hello"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeFalse())
			Expect(textOf(res)).To(Equal("updated page p1 (5 bytes)"))
		}, SpecTimeout(specTimeout))

		It("answers an unknown tool with a readable isError result", func(ctx SpecContext) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_nope", Arguments: map[string]any{}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeTrue())
			Expect(textOf(res)).To(ContainSubstring("nope"))
		}, SpecTimeout(specTimeout))

		It("still answers through a 100 ms latency toxic on the upstream link", func(ctx SpecContext) {
			Expect(env.DocmostLink.Toxic("lag", "latency", "downstream", map[string]any{"latency": 100})).To(Succeed())
			start := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_search", Arguments: map[string]any{"query": "lag"}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeFalse())
			Expect(time.Since(start)).To(BeNumerically(">=", 100*time.Millisecond), "the toxic was in the path")
		}, SpecTimeout(specTimeout))
	})

	Context("with the independent mark3labs/mcp-go client", func() {
		It("lists tools and calls both tools", func(ctx SpecContext) {
			c, err := harness.Mark3Client(ctx, env.ProjectURL(), "", "")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(c.Close)

			tools, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
			Expect(err).NotTo(HaveOccurred())
			Expect(tools.Tools).To(HaveLen(2))

			req := mcpgo.CallToolRequest{}
			req.Params.Name = "docmost_search"
			req.Params.Arguments = map[string]any{"query": "restore"}
			res, err := c.CallTool(ctx, req)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeFalse())
			Expect(res.Content).NotTo(BeEmpty())
			Expect(res.Content[0].(mcpgo.TextContent).Text).To(Equal(upstream.SearchText("restore")))

			req.Params.Name = "docmost_update_page"
			req.Params.Arguments = map[string]any{"page_id": "p2", "content": "abc"}
			res, err = c.CallTool(ctx, req)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Content[0].(mcpgo.TextContent).Text).To(Equal("updated page p2 (3 bytes)"))
		}, SpecTimeout(specTimeout))
	})
})
