package scenarios_test

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
	"github.com/mcpchaos/mcpchaos/scenarios/evidence/mcplocal"
	"github.com/mcpchaos/mcpchaos/scenarios/harness"
)

// runOperation runs, on the in-process target, the catalogue's security
// scenario whose operation is op (the catalogue also runs it on every target).
func runOperation(ctx SpecContext, op catalogue.Operation) {
	GinkgoHelper()
	for _, s := range catalogue.All() {
		if s.Operation.Name != op.Name || !s.HasLabel("security") {
			continue
		}
		if _, ok := s.Fault.(harness.ProxyKill); ok {
			continue
		}
		r := s.Run(ctx, &harness.InProcess{})
		Expect(r.NotApplicable).To(BeEmpty())
		Expect(r.Pass).To(BeTrue(), "%s: %s", s.Name(), r.Reason)
		return
	}
	Fail("no security scenario runs operation " + op.Name)
}

// The knob matrix: for each security bound (docs/security.md), a spec where that
// knob alone decides the outcome, named after its variable.
var _ = Describe("Security knobs", Label("security", "knobs"), func() {
	It("MCPCTL_SESSION_IDLE_MS decides: a session idle past it is closed and recreated on its next call", func(ctx SpecContext) {
		runOperation(ctx, catalogue.IdleExpiry)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_SESSIONS_MAX and MCPCTL_SESSIONS_PER_USER_MAX decide: sessions over a cap are refused naming it", func(ctx SpecContext) {
		runOperation(ctx, catalogue.SessionCaps)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_SESSION_RECORD_TTL_MS decides: a session record older than it is forgotten", func(ctx SpecContext) {
		runOperation(ctx, catalogue.TombstoneExpiry)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_READ_TIMEOUT_MS decides: a body trickled byte by byte is cut off", func(ctx SpecContext) {
		runOperation(ctx, catalogue.SlowTrickle)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_IDLE_CONN_TIMEOUT_MS decides: an idle keep-alive connection is closed", func(ctx SpecContext) {
		runOperation(ctx, catalogue.IdleConnection)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_CONNS_MAX decides: connections past it get a 503 naming it, and make room by closing one silent past the read-header bound", func(ctx SpecContext) {
		runOperation(ctx, catalogue.ConnCap)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_MAX_HEADER_BYTES decides: larger request headers get 431", func(ctx SpecContext) {
		runOperation(ctx, catalogue.HugeHeaders)
	}, SpecTimeout(30*time.Second))
	It("MCPCTL_UPSTREAM_MAX_RESPONSE_BYTES decides: a larger upstream answer is an isError naming it", func(ctx SpecContext) {
		runOperation(ctx, catalogue.UpstreamTooLarge)
	}, SpecTimeout(30*time.Second))
})

// authorization sends every request with the Authorization header as given.
type authorization struct {
	value string
	next  http.RoundTripper
}

func (a authorization) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", a.value)
	return a.next.RoundTrip(r)
}

// connectWithAuthorization connects the go-sdk client to env's project,
// every request carrying Authorization: value.
func connectWithAuthorization(ctx context.Context, env *harness.Env, value string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: authorization{value: value, next: http.DefaultTransport.(*http.Transport).Clone()}}
	DeferCleanup(hc.CloseIdleConnections)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpchaos-bearer", Version: "0.1.0"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: env.ProjectURL(), HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

// RFC 6750 (via RFC 7235): the auth scheme is case-insensitive. A client
// library that writes `bearer` is as much alice as one that writes `Bearer`:
// it gets her session, her calls work, and her audit rows name her.
var _ = Describe("The bearer scheme", Label("security", "bearer"), func() {
	DescribeTable("is the user's whatever its case",
		func(ctx SpecContext, scheme string) {
			env := newWorld(alice)
			cs, err := connectWithAuthorization(ctx, env, scheme+" alice-token")
			Expect(err).NotTo(HaveOccurred(), "initialize with %q", scheme)
			DeferCleanup(cs.Close)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "docmost_update_page", Arguments: map[string]any{"page_id": "p1", "content": scheme}})
			Expect(err).NotTo(HaveOccurred())
			Expect(res.IsError).To(BeFalse(), "the call with %q", scheme)
			rows, err := mcplocal.AuditSession(ctx, env, cs.ID())
			Expect(err).NotTo(HaveOccurred())
			Expect(rows).NotTo(BeEmpty())
			for _, r := range rows {
				Expect(r.User).To(Equal("alice"), "the %s row of the session", r.Kind)
			}
		},
		Entry("lower case", "bearer", SpecTimeout(specTimeout)),
		Entry("upper case", "BEARER", SpecTimeout(specTimeout)),
		Entry("as RFC 6750 writes it", "Bearer", SpecTimeout(specTimeout)),
		Entry("mixed", "bEaReR", SpecTimeout(specTimeout)),
	)

	It("is still required: her token under another scheme is refused", func(ctx SpecContext) {
		env := newWorld(alice)
		_, err := connectWithAuthorization(ctx, env, "Basic alice-token")
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("Unauthorized"))
	}, SpecTimeout(specTimeout))
})
