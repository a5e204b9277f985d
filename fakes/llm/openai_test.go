package llm_test

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/openai/openai-go"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/mcpchaos/mcpchaos/fakes/llm"
)

var _ = Describe("OpenAI wire format, seen through openai-go", func() {
	const (
		model  = "qwen3-32b"
		prompt = "Pick the prompts that fit a docmost search session"
	)
	var (
		srv    *llm.Server
		hc     *http.Client
		client openai.Client
	)

	BeforeEach(func() {
		srv = newFake(llm.Options{Provider: llm.OpenAI})
		hc = newHTTPClient()
		client = openAIClient(srv, hc)
	})

	set := func(steps ...llm.Step) {
		GinkgoHelper()
		Expect(srv.Set(model, steps...)).To(Succeed())
	}

	It("answers ok with the deterministic reply", func(ctx SpecContext) {
		res, err := client.Chat.Completions.New(ctx, openAIParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(res.Object)).To(Equal("chat.completion"))
		Expect(res.Model).To(Equal(model))
		Expect(res.Created).To(BeNumerically(">", 0))
		Expect(res.Choices).To(HaveLen(1))
		Expect(res.Choices[0].Message.Content).To(Equal(llm.Reply(prompt)))
		Expect(string(res.Choices[0].Message.Role)).To(Equal("assistant"))
		Expect(res.Choices[0].FinishReason).To(Equal("stop"))
		Expect(res.Usage.TotalTokens).To(Equal(res.Usage.PromptTokens + res.Usage.CompletionTokens))
		Expect(lastRequest(srv)).To(And(HaveField("Path", "/v1/chat/completions"), HaveField("Model", model),
			HaveField("Prompt", prompt), HaveField("Status", http.StatusOK)))
	}, SpecTimeout(specTimeout))

	It("streams the reply as chunks ending in [DONE]", func(ctx SpecContext) {
		p := openAIParams(model, prompt)
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		got := readOpenAIStream(ctx, client, p)
		Expect(got.Err).NotTo(HaveOccurred())
		Expect(got.Text).To(Equal(llm.Reply(prompt)))
		Expect(got.FinishReasons).To(Equal([]string{"stop"}))
		Expect(len(got.Chunks)).To(BeNumerically(">", 4))
		for _, c := range got.Chunks {
			Expect(string(c.Object)).To(Equal("chat.completion.chunk"))
			Expect(c.ID).To(Equal(got.Chunks[0].ID))
		}
		Expect(got.Chunks[0].Choices[0].Delta.Role).To(Equal("assistant"))
		last := got.Chunks[len(got.Chunks)-1]
		Expect(last.Choices).To(BeEmpty())
		Expect(last.Usage.CompletionTokens).To(BeNumerically(">", 0))

		var acc openai.ChatCompletionAccumulator
		for _, c := range got.Chunks {
			acc.AddChunk(c)
		}
		Expect(acc.Choices[0].Message.Content).To(Equal(llm.Reply(prompt)))
	}, SpecTimeout(specTimeout))

	It("ends a raw stream with data: [DONE]", func(ctx SpecContext) {
		status, header, body := rawPost(ctx, hc, srv.URL()+"/v1/chat/completions", nil, map[string]any{
			"model": model, "stream": true, "messages": []map[string]any{{"role": "user", "content": "hi there"}},
		})
		Expect(status).To(Equal(http.StatusOK))
		Expect(header.Get("Content-Type")).To(HavePrefix("text/event-stream"))
		Expect(header.Get("x-request-id")).To(HavePrefix("req_"))
		Expect(body).To(HavePrefix("data: {"))
		Expect(body).To(HaveSuffix("data: [DONE]\n\n"))
		Expect(sseEventNames(body)).To(BeEmpty(), "OpenAI streams carry no event names")
	}, SpecTimeout(specTimeout))

	DescribeTable("error behaviours surface as *openai.Error with the real status, type and code",
		func(ctx SpecContext, kind llm.Kind, status int, errType, code string) {
			set(llm.Do(kind))
			_, err := client.Chat.Completions.New(ctx, openAIParams(model, prompt))
			var apiErr *openai.Error
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "got %v", err)
			Expect(apiErr.StatusCode).To(Equal(status))
			Expect(apiErr.Type).To(Equal(errType))
			Expect(apiErr.Code).To(Equal(code))
			Expect(apiErr.Message).NotTo(BeEmpty())
			Expect(apiErr.JSON.Param.Valid()).To(BeFalse(), "param is null")
		},
		Entry("not_found", llm.NotFound, 404, "invalid_request_error", "model_not_found"),
		Entry("bad_request", llm.BadRequest, 400, "invalid_request_error", ""),
		Entry("unauthorized", llm.Unauthorized, 401, "invalid_request_error", "invalid_api_key"),
		Entry("rate_limited", llm.RateLimited, 429, "requests", "rate_limit_exceeded"),
		Entry("server_error", llm.ServerError, 500, "server_error", ""),
		Entry("overloaded", llm.Overloaded, 503, "server_error", ""),
		Entry("stream_error on a plain request", llm.StreamError, 500, "server_error", ""),
	)

	It("ends hang_before_headers with the client's deadline", func(ctx SpecContext) {
		set(llm.Do(llm.HangBeforeHeaders))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		_, err := client.Chat.Completions.New(cctx, openAIParams(model, prompt))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Eventually(srv.Requests).Should(ConsistOf(And(HaveField("Done", true), HaveField("ClientGone", true))))
	}, SpecTimeout(5*time.Second))

	It("ends hang_after_headers with the client's deadline, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.HangAfterHeaders))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		_, err := client.Chat.Completions.New(cctx, openAIParams(model, prompt))
		Expect(err).To(MatchError(context.DeadlineExceeded))

		sctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		got := readOpenAIStream(sctx, client, openAIParams(model, prompt))
		Expect(got.Chunks).To(BeEmpty())
		Expect(got.Err).To(MatchError(context.DeadlineExceeded))
	}, SpecTimeout(5*time.Second))

	It("stalls mid-stream: partial text, then the client's deadline", func(ctx SpecContext) {
		set(llm.Do(llm.StallMidStream))
		cctx, cancel := context.WithTimeout(ctx, hangBudget)
		defer cancel()
		got := readOpenAIStream(cctx, client, openAIParams(model, prompt))
		Expect(got.Err).To(MatchError(context.DeadlineExceeded))
		Expect(got.Text).NotTo(BeEmpty())
		Expect(llm.Reply(prompt)).To(HavePrefix(got.Text))
		Expect(len(got.Text)).To(BeNumerically("<", len(llm.Reply(prompt))))
		Expect(got.FinishReasons).To(BeEmpty())
	}, SpecTimeout(5*time.Second))

	It("truncates a stream: openai-go sees a normal end with partial text and no finish_reason", func(ctx SpecContext) {
		set(llm.Do(llm.TruncatedStream))
		got := readOpenAIStream(ctx, client, openAIParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred(), "openai-go treats EOF without [DONE] as the end")
		Expect(got.Text).NotTo(BeEmpty())
		Expect(len(got.Text)).To(BeNumerically("<", len(llm.Reply(prompt))))
		Expect(got.FinishReasons).To(BeEmpty(), "the only trace of the truncation")
	}, SpecTimeout(specTimeout))

	It("turns stream_error into a stream error after partial text", func(ctx SpecContext) {
		set(llm.Do(llm.StreamError))
		got := readOpenAIStream(ctx, client, openAIParams(model, prompt))
		Expect(got.Err).To(MatchError(ContainSubstring("received error while streaming")))
		Expect(got.Err).To(MatchError(ContainSubstring("server_error")))
		Expect(got.Text).NotTo(BeEmpty())
		Expect(lastRequest(srv).Status).To(Equal(http.StatusOK))
	}, SpecTimeout(specTimeout))

	It("answers empty with empty content, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.Empty))
		res, err := client.Chat.Completions.New(ctx, openAIParams(model, prompt))
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Choices[0].Message.Content).To(BeEmpty())
		Expect(res.Choices[0].FinishReason).To(Equal("stop"))

		got := readOpenAIStream(ctx, client, openAIParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred())
		Expect(got.Text).To(BeEmpty())
		Expect(got.FinishReasons).To(Equal([]string{"stop"}))
	}, SpecTimeout(specTimeout))

	It("answers malformed with a 200 the SDK cannot decode, plain and streamed", func(ctx SpecContext) {
		set(llm.Do(llm.Malformed))
		_, err := client.Chat.Completions.New(ctx, openAIParams(model, prompt))
		Expect(err).To(HaveOccurred())
		var apiErr *openai.Error
		Expect(errors.As(err, &apiErr)).To(BeFalse())

		got := readOpenAIStream(ctx, client, openAIParams(model, prompt))
		Expect(got.Err).To(HaveOccurred())
		Expect(got.Chunks).To(HaveLen(1), "only the role chunk decodes")
	}, SpecTimeout(specTimeout))

	It("resets the connection", func(ctx SpecContext) {
		set(llm.Do(llm.Reset))
		_, err := client.Chat.Completions.New(ctx, openAIParams(model, prompt))
		Expect(err).To(HaveOccurred())
		var apiErr *openai.Error
		Expect(errors.As(err, &apiErr)).To(BeFalse())
		Expect(lastRequest(srv).Step.Kind).To(Equal(llm.Reset))
	}, SpecTimeout(specTimeout))

	It("answers slow only after the delay", func(ctx SpecContext) {
		set(llm.SlowFor(80 * time.Millisecond))
		start := time.Now()
		got := readOpenAIStream(ctx, client, openAIParams(model, prompt))
		Expect(got.Err).NotTo(HaveOccurred())
		Expect(time.Since(start)).To(BeNumerically(">=", 80*time.Millisecond))
		Expect(got.Text).To(Equal(llm.Reply(prompt)))
	}, SpecTimeout(specTimeout))

	It("checks the bearer token when an API key is configured", func(ctx SpecContext) {
		keyed := newFake(llm.Options{Provider: llm.OpenAI, APIKey: "right"})
		keyedClient := openAIClient(keyed, hc)
		_, err := keyedClient.Chat.Completions.New(ctx, openAIParams(model, prompt))
		var apiErr *openai.Error
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.StatusCode).To(Equal(http.StatusUnauthorized))
		Expect(apiErr.Code).To(Equal("invalid_api_key"))
	}, SpecTimeout(specTimeout))

	Describe("GET /v1/models", func() {
		It("lists the configured models with created and owned_by", func(ctx SpecContext) {
			srv.SetModels([]llm.Model{
				{ID: "qwen3-32b", Created: time.Unix(1_700_000_000, 0)},
				{ID: "Qwen/Qwen3-235B", Created: time.Unix(1_750_000_000, 0), OwnedBy: "vllm"},
			})
			pager := client.Models.ListAutoPaging(ctx)
			var got []openai.Model
			for pager.Next() {
				got = append(got, pager.Current())
			}
			Expect(pager.Err()).NotTo(HaveOccurred())
			Expect(got).To(HaveLen(2))
			Expect(got[0]).To(And(HaveField("ID", "qwen3-32b"), HaveField("Created", int64(1_700_000_000)),
				HaveField("OwnedBy", "mcpchaos")))
			Expect(string(got[0].Object)).To(Equal("model"))
			Expect(got[1]).To(And(HaveField("ID", "Qwen/Qwen3-235B"), HaveField("OwnedBy", "vllm")))

			m, err := client.Models.Get(ctx, "Qwen/Qwen3-235B")
			Expect(err).NotTo(HaveOccurred())
			Expect(m.Created).To(Equal(int64(1_750_000_000)))
		}, SpecTimeout(specTimeout))

		It("404s an unknown model with model_not_found", func(ctx SpecContext) {
			_, err := client.Models.Get(ctx, "gpt-nope")
			var apiErr *openai.Error
			Expect(errors.As(err, &apiErr)).To(BeTrue())
			Expect(apiErr.StatusCode).To(Equal(http.StatusNotFound))
			Expect(apiErr.Code).To(Equal("model_not_found"))
		}, SpecTimeout(specTimeout))
	})
})
