package llm_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

// anthropicOutcome names what a client observed: "ok", the HTTP status of an
// API error, or another error.
func anthropicOutcome(ctx context.Context, c anthropic.Client, model string) string {
	_, err := c.Messages.New(ctx, anthropicParams(model, "hello"))
	var apiErr *anthropic.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &apiErr):
		return strconv.Itoa(apiErr.StatusCode)
	default:
		return err.Error()
	}
}

var _ = Describe("Plans", func() {
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

	It("plays a sequence in order and repeats its last step: fail twice, then ok", func(ctx SpecContext) {
		Expect(srv.Set("claude-opus-5", llm.Do(llm.ServerError), llm.Do(llm.Overloaded), llm.Do(llm.OK))).To(Succeed())
		var got []string
		for range 5 {
			got = append(got, anthropicOutcome(ctx, client, "claude-opus-5"))
		}
		Expect(got).To(Equal([]string{"500", "529", "ok", "ok", "ok"}))
		var kinds []llm.Kind
		for _, r := range srv.Requests() {
			kinds = append(kinds, r.Step.Kind)
		}
		Expect(kinds).To(Equal([]llm.Kind{llm.ServerError, llm.Overloaded, llm.OK, llm.OK, llm.OK}))
	}, SpecTimeout(specTimeout))

	It("keeps one sequence per model", func(ctx SpecContext) {
		Expect(srv.Set("claude-opus-5", llm.Do(llm.NotFound))).To(Succeed())
		Expect(anthropicOutcome(ctx, client, "claude-opus-5")).To(Equal("404"))
		Expect(anthropicOutcome(ctx, client, "claude-sonnet-5")).To(Equal("ok"))
		Expect(srv.Set("claude-opus-5")).To(Succeed(), "no steps: back to the default")
		Expect(anthropicOutcome(ctx, client, "claude-opus-5")).To(Equal("ok"))
	}, SpecTimeout(specTimeout))

	It("answers unscripted models with the default, set by Options.Default or AnyModel", func(ctx SpecContext) {
		strict := newFake(llm.Options{Provider: llm.Anthropic, Default: llm.Do(llm.NotFound)})
		strictClient := anthropicClient(strict, hc)
		Expect(strict.Set("claude-opus-5", llm.Do(llm.OK))).To(Succeed())
		Expect(anthropicOutcome(ctx, strictClient, "claude-opus-5")).To(Equal("ok"))
		Expect(anthropicOutcome(ctx, strictClient, "claude-unknown")).To(Equal("404"))

		Expect(strict.Set(llm.AnyModel, llm.Do(llm.RateLimited))).To(Succeed())
		Expect(anthropicOutcome(ctx, strictClient, "claude-unknown")).To(Equal("429"))
		strict.Unset(llm.AnyModel)
		Expect(anthropicOutcome(ctx, strictClient, "claude-unknown")).To(Equal("404"), "back to Options.Default")
	}, SpecTimeout(specTimeout))

	It("draws seeded random steps deterministically", func(ctx SpecContext) {
		random := llm.Random{Seed: 42, Choices: []llm.Choice{
			{Step: llm.Do(llm.OK), Weight: 2},
			{Step: llm.Do(llm.ServerError), Weight: 1},
			{Step: llm.Do(llm.NotFound), Weight: 1},
		}}
		draw := func(seed uint64) []string {
			fake := newFake(llm.Options{Provider: llm.Anthropic})
			r := random
			r.Seed = seed
			Expect(fake.SetRandom("claude-opus-5", r)).To(Succeed())
			c := anthropicClient(fake, hc)
			var got []string
			for range 24 {
				got = append(got, anthropicOutcome(ctx, c, "claude-opus-5"))
			}
			return got
		}
		first, second, other := draw(42), draw(42), draw(7)
		Expect(second).To(Equal(first), "same seed, same draws")
		Expect(other).NotTo(Equal(first), "another seed, other draws")
		Expect(first).To(ContainElements("ok", "500", "404"))
	}, SpecTimeout(specTimeout))

	It("rejects invalid plans", func(_ SpecContext) {
		Expect(srv.Set("m", llm.Step{Kind: "explode"})).To(MatchError(ContainSubstring("unknown behaviour")))
		Expect(srv.Set("m", llm.Step{Kind: llm.Slow, Delay: -1})).To(MatchError(ContainSubstring("negative delay")))
		Expect(srv.SetRandom("m", llm.Random{})).To(MatchError(ContainSubstring("no choices")))
		Expect(srv.SetRandom("m", llm.Random{Choices: []llm.Choice{{Step: llm.Do(llm.OK)}}})).To(MatchError(ContainSubstring("zero")))
		Expect(srv.SetPlan("", llm.Plan{Steps: []llm.Step{llm.Do(llm.OK)}})).To(HaveOccurred())
		Expect(srv.Plans()).To(HaveLen(1), "only the default")
	}, SpecTimeout(specTimeout))

	It("scripts the models listing with ListModels, apart from the default", func(ctx SpecContext) {
		Expect(srv.Set(llm.AnyModel, llm.Do(llm.ServerError))).To(Succeed())
		_, err := client.Models.List(ctx, anthropic.ModelListParams{})
		Expect(err).NotTo(HaveOccurred(), "the listing does not follow AnyModel")

		Expect(srv.Set(llm.ListModels, llm.Do(llm.Overloaded), llm.Do(llm.Empty))).To(Succeed())
		_, err = client.Models.List(ctx, anthropic.ModelListParams{})
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(529))
		page, err := client.Models.List(ctx, anthropic.ModelListParams{})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).To(BeEmpty())
		Expect(page.HasMore).To(BeFalse())
	}, SpecTimeout(specTimeout))

	It("reports expected requests that never came", func(ctx SpecContext) {
		srv.Expect("claude-opus-5", 2)
		srv.Expect("claude-sonnet-5", 1)
		Expect(srv.Unmet()).To(Equal([]string{
			"claude-opus-5: expected 2 request(s), got 0",
			"claude-sonnet-5: expected 1 request(s), got 0",
		}))
		Expect(anthropicOutcome(ctx, client, "claude-opus-5")).To(Equal("ok"))
		Expect(anthropicOutcome(ctx, client, "claude-sonnet-5")).To(Equal("ok"))
		Expect(srv.Unmet()).To(Equal([]string{"claude-opus-5: expected 2 request(s), got 1"}))
		Expect(anthropicOutcome(ctx, client, "claude-opus-5")).To(Equal("ok"))
		Expect(srv.Unmet()).To(BeEmpty())

		srv.ClearRequests()
		Expect(srv.Unmet()).To(HaveLen(2), "counts restart with the record")
		srv.Reset()
		Expect(srv.Unmet()).To(BeEmpty(), "Reset drops expectations")
	}, SpecTimeout(specTimeout))

	It("numbers requests across ClearRequests", func(ctx SpecContext) {
		Expect(anthropicOutcome(ctx, client, "a")).To(Equal("ok"))
		srv.ClearRequests()
		Expect(srv.Requests()).To(BeEmpty())
		Expect(anthropicOutcome(ctx, client, "b")).To(Equal("ok"))
		Expect(srv.Requests()).To(ConsistOf(And(HaveField("Seq", 2), HaveField("Model", "b"))))
	}, SpecTimeout(specTimeout))

	It("applies sequences to OpenAI too", func(ctx SpecContext) {
		oai := newFake(llm.Options{Provider: llm.OpenAI})
		Expect(oai.Set("qwen3-32b", llm.Do(llm.RateLimited), llm.Do(llm.OK))).To(Succeed())
		c := openAIClient(oai, hc)
		_, err := c.Chat.Completions.New(ctx, openAIParams("qwen3-32b", "x"))
		var apiErr *openai.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(http.StatusTooManyRequests))
		_, err = c.Chat.Completions.New(ctx, openAIParams("qwen3-32b", "x"))
		Expect(err).NotTo(HaveOccurred())
	}, SpecTimeout(specTimeout))
})
