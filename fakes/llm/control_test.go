package llm_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

var _ = Describe("Control API under /_fake/", func() {
	var (
		srv    *llm.Server
		hc     *http.Client
		client anthropic.Client
	)

	BeforeEach(func() {
		srv = newFake(llm.Options{Provider: llm.Anthropic})
		hc = newHTTPClient()
		client = anthropicClient(srv, hc)
	})

	It("switches a model's behaviour for a client", func(ctx SpecContext) {
		status, body := control(hc, http.MethodPut, srv.URL()+"/_fake/behaviors/claude-opus-5", `["server_error", {"kind":"ok","text":"fixed"}]`)
		Expect(status).To(Equal(http.StatusNoContent), body)

		_, err := client.Messages.New(ctx, anthropicParams("claude-opus-5", "hi"))
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(http.StatusInternalServerError))
		msg, err := client.Messages.New(ctx, anthropicParams("claude-opus-5", "hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Content[0].Text).To(Equal("fixed"))

		status, _ = control(hc, http.MethodDelete, srv.URL()+"/_fake/behaviors/claude-opus-5", "")
		Expect(status).To(Equal(http.StatusNoContent))
		msg, err = client.Messages.New(ctx, anthropicParams("claude-opus-5", "hi"))
		Expect(err).NotTo(HaveOccurred())
		Expect(msg.Content[0].Text).To(Equal(llm.Reply("hi")))
	}, SpecTimeout(specTimeout))

	It("accepts a single step, a short-form step, a random plan and the default", func(_ SpecContext) {
		for model, body := range map[string]string{
			"a": `{"kind":"slow","delay":"250ms"}`,
			"b": `"rate_limited:2s"`,
			"c": `{"random":{"seed":3,"choices":[{"step":"ok","weight":1},{"step":{"kind":"reset"},"weight":1}]}}`,
			"*": `{"steps":["overloaded"]}`,
		} {
			status, resp := control(hc, http.MethodPut, srv.URL()+"/_fake/behaviors/"+model, body)
			Expect(status).To(Equal(http.StatusNoContent), "%s: %s", model, resp)
		}
		status, body := control(hc, http.MethodGet, srv.URL()+"/_fake/behaviors", "")
		Expect(status).To(Equal(http.StatusOK))
		var plans map[string]llm.Plan
		Expect(json.Unmarshal([]byte(body), &plans)).To(Succeed())
		Expect(plans).To(Equal(map[string]llm.Plan{
			"a": {Steps: []llm.Step{llm.SlowFor(250 * time.Millisecond)}},
			"b": {Steps: []llm.Step{{Kind: llm.RateLimited, Delay: 2 * time.Second}}},
			"c": {Random: &llm.Random{Seed: 3, Choices: []llm.Choice{
				{Step: llm.Do(llm.OK), Weight: 1}, {Step: llm.Do(llm.Reset), Weight: 1}}}},
			"*": {Steps: []llm.Step{llm.Do(llm.Overloaded)}},
		}))
		Expect(srv.Plans()).To(Equal(plans))
	}, SpecTimeout(specTimeout))

	It("rejects invalid plans with 400 and keeps the old one", func(_ SpecContext) {
		for _, body := range []string{``, `"explode"`, `["ok", "slow:soon"]`, `{"steps":[]}`, `{"stepz":["ok"]}`, `{"kind":"ok","delay":"-1s"}`} {
			status, resp := control(hc, http.MethodPut, srv.URL()+"/_fake/behaviors/m", body)
			Expect(status).To(Equal(http.StatusBadRequest), body)
			Expect(resp).To(ContainSubstring(`"error"`))
		}
		Expect(srv.Plans()).NotTo(HaveKey("m"))
	}, SpecTimeout(specTimeout))

	It("takes model names with slashes", func(ctx SpecContext) {
		oai := newFake(llm.Options{Provider: llm.OpenAI})
		status, _ := control(hc, http.MethodPut, oai.URL()+"/_fake/behaviors/Qwen/Qwen3-32B", `"not_found"`)
		Expect(status).To(Equal(http.StatusNoContent))
		c := openAIClient(oai, hc)
		_, err := c.Chat.Completions.New(ctx, openAIParams("Qwen/Qwen3-32B", "x"))
		var apiErr *openai.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(http.StatusNotFound))
	}, SpecTimeout(specTimeout))

	It("lists and clears the recorded requests", func(ctx SpecContext) {
		Expect(srv.Set("claude-opus-5", llm.Do(llm.BadRequest))).To(Succeed())
		_, err := client.Messages.New(ctx, anthropicParams("claude-opus-5", "what changed?"))
		Expect(err).To(HaveOccurred())

		status, body := control(hc, http.MethodGet, srv.URL()+"/_fake/requests", "")
		Expect(status).To(Equal(http.StatusOK))
		var reqs []llm.Request
		Expect(json.Unmarshal([]byte(body), &reqs)).To(Succeed())
		Expect(reqs).To(HaveLen(1))
		Expect(reqs[0]).To(And(HaveField("Model", "claude-opus-5"), HaveField("Prompt", "what changed?"),
			HaveField("Status", http.StatusBadRequest), HaveField("Step", llm.Do(llm.BadRequest)), HaveField("Done", true)))
		Expect(reqs[0].Time).To(BeTemporally("~", time.Now(), 5*time.Second))

		status, _ = control(hc, http.MethodDelete, srv.URL()+"/_fake/requests", "")
		Expect(status).To(Equal(http.StatusNoContent))
		_, body = control(hc, http.MethodGet, srv.URL()+"/_fake/requests", "")
		Expect(body).To(MatchJSON(`[]`))
		Expect(srv.Requests()).To(BeEmpty(), "control requests are not recorded")
	}, SpecTimeout(specTimeout))

	It("sets expectations and reports the unmet ones", func(ctx SpecContext) {
		status, _ := control(hc, http.MethodPut, srv.URL()+"/_fake/expectations/claude-opus-5", `{"count": 1}`)
		Expect(status).To(Equal(http.StatusNoContent))
		_, body := control(hc, http.MethodGet, srv.URL()+"/_fake/unmet", "")
		Expect(body).To(MatchJSON(`["claude-opus-5: expected 1 request(s), got 0"]`))

		_, err := client.Messages.New(ctx, anthropicParams("claude-opus-5", "hi"))
		Expect(err).NotTo(HaveOccurred())
		_, body = control(hc, http.MethodGet, srv.URL()+"/_fake/unmet", "")
		Expect(body).To(MatchJSON(`[]`))

		status, _ = control(hc, http.MethodPut, srv.URL()+"/_fake/expectations/claude-opus-5", `{"cnt": 1}`)
		Expect(status).To(Equal(http.StatusBadRequest))
	}, SpecTimeout(specTimeout))

	It("replaces the model list and resets everything", func(ctx SpecContext) {
		status, _ := control(hc, http.MethodPut, srv.URL()+"/_fake/models",
			`[{"id":"claude-x","created":"2026-01-02T00:00:00Z"}]`)
		Expect(status).To(Equal(http.StatusNoContent))
		page, err := client.Models.List(ctx, anthropic.ModelListParams{})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(ConsistOf(HaveField("ID", "claude-x")))
		Expect(srv.Set("claude-x", llm.Do(llm.Reset))).To(Succeed())

		status, _ = control(hc, http.MethodPost, srv.URL()+"/_fake/reset", "")
		Expect(status).To(Equal(http.StatusNoContent))
		Expect(srv.Models()).To(Equal(llm.DefaultModels(llm.Anthropic)))
		Expect(srv.Plans()).To(Equal(map[string]llm.Plan{llm.AnyModel: {Steps: []llm.Step{llm.Do(llm.OK)}}}))
		Expect(srv.Requests()).To(BeEmpty())
	}, SpecTimeout(specTimeout))

	It("serves the behaviour catalogue", func(_ SpecContext) {
		status, body := control(hc, http.MethodGet, srv.URL()+"/_fake/catalogue", "")
		Expect(status).To(Equal(http.StatusOK))
		var infos []llm.KindInfo
		Expect(json.Unmarshal([]byte(body), &infos)).To(Succeed())
		Expect(infos).To(Equal(llm.Catalogue()))
		Expect(infos).To(ContainElement(HaveField("Kind", llm.StallMidStream)))
	}, SpecTimeout(specTimeout))

	It("answers unknown provider paths with the provider's 404 error body", func(ctx SpecContext) {
		status, _, body := rawPost(ctx, hc, srv.URL()+"/v1/complete", nil, map[string]any{})
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(body).To(MatchRegexp(`^\{"type":"error","error":\{"type":"not_found_error","message":"Not Found"\}`))
		Expect(srv.Requests()).To(ConsistOf(And(HaveField("Path", "/v1/complete"), HaveField("Status", http.StatusNotFound),
			HaveField("Step.Kind", llm.NotFound))), "a client with a wrong path shows up in the record")

		status, _ = control(hc, http.MethodGet, srv.URL()+"/_fake/nothing", "")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(srv.Requests()).To(HaveLen(1), "control paths are not recorded")
	}, SpecTimeout(specTimeout))
})
