package llm_test

import (
	"errors"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

var _ = Describe("OAuth gating, seen through anthropic-sdk-go", func() {
	const token = "sk-ant-oat01-fake-subscription-token"
	var (
		srv *llm.Server
		hc  *http.Client
	)
	BeforeEach(func() {
		srv = newFake(llm.Options{Provider: llm.Anthropic, OAuthGate: true})
		hc = newHTTPClient()
	})

	// client authenticates with the OAuth token as a bearer token (the SDK's
	// WithAuthToken), with or without the oauth beta header.
	client := func(beta bool) anthropic.Client {
		opts := []aoption.RequestOption{
			aoption.WithBaseURL(srv.URL()), aoption.WithAuthToken(token),
			aoption.WithMaxRetries(0), aoption.WithHTTPClient(hc),
		}
		if beta {
			opts = append(opts, aoption.WithHeader("anthropic-beta", llm.OAuthBeta))
		}
		return anthropic.NewClient(opts...)
	}
	status := func(err error) int {
		GinkgoHelper()
		var apiErr *anthropic.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "want *anthropic.Error, got %v", err)
		return apiErr.StatusCode
	}

	It("answers 404 on an older model id and 429 on a current one", func(ctx SpecContext) {
		c := client(true)
		_, err := c.Messages.New(ctx, anthropicParams("claude-opus-4-20250514", "hello"))
		Expect(status(err)).To(Equal(http.StatusNotFound))
		_, err = c.Messages.New(ctx, anthropicParams("claude-opus-5", "hello"))
		Expect(status(err)).To(Equal(http.StatusTooManyRequests))
		Expect(lastRequest(srv).Step.Kind).To(Equal(llm.RateLimited))
	}, SpecTimeout(specTimeout))

	It("lets the token list models: auth passes, the gating is on completions", func(ctx SpecContext) {
		c := client(true)
		page, err := c.Models.List(ctx, anthropic.ModelListParams{})
		Expect(err).NotTo(HaveOccurred())
		Expect(page.Data).NotTo(BeEmpty())
	}, SpecTimeout(specTimeout))

	It("refuses the token without the oauth beta header, and as x-api-key", func(ctx SpecContext) {
		noBeta := client(false)
		_, err := noBeta.Messages.New(ctx, anthropicParams("claude-opus-5", "hello"))
		Expect(status(err)).To(Equal(http.StatusUnauthorized))
		asKey := anthropic.NewClient(aoption.WithBaseURL(srv.URL()), aoption.WithHeader("x-api-key", token),
			aoption.WithMaxRetries(0), aoption.WithHTTPClient(hc))
		_, err = asKey.Messages.New(ctx, anthropicParams("claude-opus-5", "hello"))
		Expect(status(err)).To(Equal(http.StatusUnauthorized))
	}, SpecTimeout(specTimeout))

	It("does not gate API keys, nor tokens once the gate is off", func(ctx SpecContext) {
		key := anthropicClient(srv, hc)
		_, err := key.Messages.New(ctx, anthropicParams("claude-opus-5", "hello"))
		Expect(err).NotTo(HaveOccurred())
		srv.SetOAuthGate(false)
		c := client(true)
		_, err = c.Messages.New(ctx, anthropicParams("claude-opus-5", "hello"))
		Expect(err).NotTo(HaveOccurred())
	}, SpecTimeout(specTimeout))
})
