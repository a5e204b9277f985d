package scenarios_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/scenarios/catalogue"
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

// The knob matrix (issue 17): for each bound issue 12 added, a spec where that
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
