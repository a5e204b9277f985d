package llm_test

import (
	"context"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

// The record of a request is what specs judge the fake's side by. A client
// that has seen part of an answer must find that part in the record already:
// a spec reading the record right after its client returned may not race the
// handler's end (a streamed answer reaches the client before the handler
// returns).
var _ = Describe("The request record, read by a client that has seen the answer", func() {
	DescribeTable("holds the status as soon as the headers are out, before the handler ends",
		func(ctx SpecContext, provider llm.Provider, stream bool) {
			srv := newFake(llm.Options{Provider: provider})
			hc := newHTTPClient()
			Expect(srv.Set(llm.AnyModel, llm.Do(llm.HangAfterHeaders))).To(Succeed())
			body := `{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}],"stream":` +
				map[bool]string{true: "true", false: "false"}[stream] + `}`
			path := "/v1/messages"
			if provider == llm.OpenAI {
				path = "/v1/chat/completions"
			}
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			req, err := http.NewRequestWithContext(rctx, http.MethodPost, srv.URL()+path, strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			res, err := hc.Do(req)
			Expect(err).NotTo(HaveOccurred())
			defer res.Body.Close()
			Expect(res.StatusCode).To(Equal(http.StatusOK))

			By("the handler still hangs: the record is not done, but its status is the one the client saw")
			Expect(lastRequest(srv)).To(And(HaveField("Status", http.StatusOK), HaveField("Done", false)))
		},
		Entry("anthropic, plain", llm.Anthropic, false),
		Entry("anthropic, streamed", llm.Anthropic, true),
		Entry("openai, plain", llm.OpenAI, false),
		Entry("openai, streamed", llm.OpenAI, true),
	)

	It("is done before a reset reaches the client", func(ctx SpecContext) {
		srv := newFake(llm.Options{Provider: llm.OpenAI})
		hc := newHTTPClient()
		Expect(srv.Set(llm.AnyModel, llm.Do(llm.Reset))).To(Succeed())
		for range 20 { // a race shows in some rounds only; every round must hold
			srv.ClearRequests()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/chat/completions",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			Expect(err).NotTo(HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			_, err = hc.Do(req)
			Expect(err).To(HaveOccurred())
			Expect(srv.Requests()).To(ConsistOf(And(HaveField("Status", 0), HaveField("Done", true))))
		}
	}, SpecTimeout(10*time.Second))
})
